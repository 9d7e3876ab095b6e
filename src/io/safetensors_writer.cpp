// SafetensorsWriter: header as the Python `safetensors` package writes it ("__metadata__" first,
// header padded with spaces to 8 bytes so tensor data stays aligned).
#include "io/safetensors_writer.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "util/check.h"

namespace ds {

uint64_t TensorDecl::nbytes() const {
  uint64_t count = dtype_size(dtype);
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::string safetensors_header_bytes(const std::vector<TensorDecl>& tensors,
                                     const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorDecl& tensor : tensors) {
    const uint64_t end = offset + tensor.nbytes();
    header[tensor.name] = {{"dtype", std::string(dtype_name(tensor.dtype))},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes + json;
}

Result<SafetensorsWriter> SafetensorsWriter::create(const std::string& path, std::vector<TensorDecl> tensors,
                                                    const std::map<std::string, std::string>& metadata) {
  SafetensorsWriter writer;
  const std::string header = safetensors_header_bytes(tensors, metadata);
  uint64_t offset = header.size();
  for (const TensorDecl& tensor : tensors) {
    writer.offsets_.push_back(offset);
    offset += tensor.nbytes();
  }
  writer.data_bytes_ = offset - header.size();
  writer.tensors_ = std::move(tensors);
  DS_ASSIGN_OR_RETURN(writer.file_, WritableMappedFile::create(path, offset));
  std::memcpy(writer.file_.bytes().data(), header.data(), header.size());
  return writer;
}

std::span<std::byte> SafetensorsWriter::data(size_t index) {
  DS_CHECK(index < tensors_.size(), "tensor index ", index, " of ", tensors_.size());
  return file_.bytes().subspan(offsets_[index], tensors_[index].nbytes());
}

Status SafetensorsWriter::close() { return file_.close(); }

}  // namespace ds
