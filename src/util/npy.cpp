// .npy writer: magic, version 1.0, little-endian '<f4' C-order header padded to 64 bytes.
#include "util/npy.h"

#include <fstream>

namespace ds {

Status write_npy_f32(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  std::string dims;
  uint64_t count = 1;
  for (int64_t dim : shape) {
    dims += std::to_string(dim) + ", ";
    count *= static_cast<uint64_t>(dim);
  }
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // "(3, 4)"; a 1-D shape keeps "(3,)"
  else if (shape.size() == 1) dims.resize(dims.size() - 1);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&length), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(float)));
  out.close();
  if (!out) return Status::errorf("cannot write ", path);
  return {};
}

}  // namespace ds
