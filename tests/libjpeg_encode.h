// A JPEG encoder on the libjpeg API (libjpeg-turbo 2.1.5) for the decode tests, with what
// TurboJPEG's API does not offer: any luma sampling factors (4:4:0, 4:1:1), restart
// markers, arithmetic coding, progressive scans, and CMYK input (with the Adobe marker,
// stored inverted as Photoshop does). Input: H x W x 3 RGB, or H x W x 4 CMYK, uint8.
#pragma once

#include <csetjmp>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

namespace pipebench::testing {

struct LibjpegOptions {
  int h_samp = 2, v_samp = 2;  // luma sampling factors (chroma 1 x 1): 4:2:0 = 2 x 2,
                               // 4:4:0 = 1 x 2, 4:1:1 = 4 x 1, 4:4:4 = 1 x 1 (RGB only)
  int restart_interval = 0;    // MCUs between restart markers (0: none)
  bool arithmetic = false;
  bool progressive = false;
  int quality = 92;
  bool cmyk = false;           // 4-channel CMYK input, written as CMYK (no sampling)
};

struct LibjpegEncodeError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};

/// The JPEG file's bytes; empty when libjpeg refuses the options (e.g. arithmetic coding
/// not compiled in).
inline std::vector<uint8_t> encode_libjpeg(const std::vector<uint8_t>& pixels, int w, int h,
                                           const LibjpegOptions& o) {
  jpeg_compress_struct cinfo;
  LibjpegEncodeError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = [](j_common_ptr c) {
    std::longjmp(reinterpret_cast<LibjpegEncodeError*>(c->err)->jump, 1);
  };
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_create_compress(&cinfo);
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    free(buffer);
    return {};
  }
  jpeg_mem_dest(&cinfo, &buffer, &size);
  const int channels = o.cmyk ? 4 : 3;
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = channels;
  cinfo.in_color_space = o.cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  if (o.cmyk) {
    jpeg_set_colorspace(&cinfo, JCS_CMYK);
  } else {
    cinfo.comp_info[0].h_samp_factor = o.h_samp;
    cinfo.comp_info[0].v_samp_factor = o.v_samp;
    for (int c = 1; c < 3; ++c) cinfo.comp_info[c].h_samp_factor = cinfo.comp_info[c].v_samp_factor = 1;
  }
  jpeg_set_quality(&cinfo, o.quality, TRUE);
  cinfo.restart_interval = static_cast<unsigned>(o.restart_interval);
  cinfo.arith_code = o.arithmetic ? TRUE : FALSE;
  if (o.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels.data()) +
                   static_cast<size_t>(cinfo.next_scanline) * static_cast<size_t>(w) * channels;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> out(buffer, buffer + size);
  jpeg_destroy_compress(&cinfo);
  free(buffer);
  return out;
}

}  // namespace pipebench::testing
