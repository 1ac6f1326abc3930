// NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from cpu tensors.
//
// Note [npy dtypes]
// descr <-> DType: '|b1' bool, '|u1' uint8, '<i4' int32, '<i8' int64, '<f2' float16, '<f4'
// float32, '<f8' float64, and bfloat16 as '<V2': two-byte raw records holding the bfloat16 bits
// (what np.save writes for an ml_dtypes.bfloat16 array; NumPy alone reads it back as void and
// views it with a.view(ml_dtypes.bfloat16) or a.view('<u2') for the bits). '|V2' and the descr
// 'bfloat16' are read as bfloat16 too. Big-endian files ('>f4') are byte-swapped on reading;
// Fortran-order files are read into row-major (C) order. Writing always gives little-endian,
// C order, version 1.0 (2.0 when the header needs more than 65535 bytes).
#pragma once

#include <span>
#include <string>

#include "core/tensor.h"

namespace mpsim::tools {

// Reads a .npy file into a new contiguous cpu tensor. Throws InvalidArgument naming the file for
// a file that cannot be read or is not a well-formed .npy file (wrong magic, unknown version,
// malformed header, negative or overflowing shape, truncated data, data after the end), and
// DTypeError for dtypes mpsim has no equivalent of (complex, object, strings, int16, ...).
Tensor read_npy(const std::string& path);

// Writes `t` (any device, any strides) as a little-endian, C-order .npy file, by
// write_output_file (Note [safe outputs] in base/output_file.h): a regular file appears complete
// or not at all; a FIFO or device is written through; a read-only file, a directory or one of
// `inputs` is refused. Throws InvalidArgument when the file cannot be written.
void write_npy(const std::string& path, const Tensor& t,
               std::span<const std::string> inputs = {});

// The descr written for a dtype: "<f4", "|b1", "<V2" (bfloat16), ...
std::string npy_descr(DType dtype);

}  // namespace mpsim::tools
