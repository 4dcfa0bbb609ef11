#!/usr/bin/env python3
"""Independent PSNR and SSIM of two images, for tests/fidelity_test.cpp (issue 35).

Usage: fidelity_reference.py A B CHANNELS HEIGHT WIDTH
A and B are raw float32 files, C x H x W planar (little-endian), values 0-255.
Prints one line: "psnr_db ssim", from scikit-image (Debian's python3-skimage):
  peak_signal_noise_ratio(a, b, data_range=255)   (the MSE over every value, float64)
  structural_similarity(a, b, gaussian_weights=True, sigma=1.5,
                        use_sample_covariance=False, data_range=255, channel_axis=-1)
that is Wang et al. 2004's SSIM (11 x 11 Gaussian window, sigma 1.5, K1 0.01, K2 0.03, the
border of half a window cropped before the mean, then the mean over channels).
Exit 77 when scikit-image is not installed (the test then skips).
"""
import sys

import numpy as np

try:
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity
except ImportError:
    print("scikit-image is not installed (apt-get install python3-skimage)", file=sys.stderr)
    sys.exit(77)


def main():
    a_path, b_path = sys.argv[1], sys.argv[2]
    c, h, w = (int(v) for v in sys.argv[3:6])
    a = np.fromfile(a_path, dtype="<f4").reshape(c, h, w).transpose(1, 2, 0).astype(np.float64)
    b = np.fromfile(b_path, dtype="<f4").reshape(c, h, w).transpose(1, 2, 0).astype(np.float64)
    psnr = peak_signal_noise_ratio(a, b, data_range=255)
    ssim = structural_similarity(a, b, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                                 data_range=255, channel_axis=-1)
    print(f"{psnr:.9f} {ssim:.9f}")


if __name__ == "__main__":
    main()
