#include "tools/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/output_file.h"
#include "core/error.h"

namespace mpsim::tools {
namespace {

static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// NumPy refuses headers above 10000 bytes unless told otherwise; ours is generous but bounded,
// so a corrupt length cannot make us allocate gigabytes before the checks.
constexpr std::uint32_t kMaxHeaderBytes = 1u << 20;
constexpr std::size_t kMaxRank = 64;  // NumPy's own limit is 64 (32 before 2.0)

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InvalidArgument("[npy] " + path + ": " + what);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

struct Header {
  DType dtype = DType::Float32;
  bool swap_bytes = false;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// Reads the header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), s_(text) {}

  Header parse() {
    Header h;
    bool descr = false, fortran = false, shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (peek('[')) fail(path_, "structured dtypes (a list descr) are not supported");
        set_dtype(h, string_literal());
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        fortran = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        fail(path_, "unexpected key '" + printable(key) + "' in the header");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != s_.size()) fail(path_, "unexpected text after the header dict");
    if (!descr || !fortran || !shape) {
      fail(path_, "the header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    return h;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) {
      fail(path_, std::string("malformed header: expected '") + c + "' at byte " +
                      std::to_string(pos_) + " of the header");
    }
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
      fail(path_, "malformed header: expected a string at byte " + std::to_string(pos_));
    }
    const char quote = s_[pos_++];
    const std::size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) fail(path_, "malformed header: unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(pos_).starts_with(word)) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail(path_, "malformed header: fortran_order must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (!peek(')')) {
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == '-') fail(path_, "negative dimension in the shape");
      std::uint64_t v = 0;
      const std::size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        v = v * 10 + static_cast<std::uint64_t>(s_[pos_++] - '0');
        if (v > static_cast<std::uint64_t>(INT64_MAX)) fail(path_, "a dimension overflows int64");
      }
      if (pos_ == start) fail(path_, "malformed header: expected an integer in the shape");
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2's long literal
      dims.push_back(static_cast<std::int64_t>(v));
      if (dims.size() > kMaxRank) fail(path_, "more than 64 dimensions");
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }
  void set_dtype(Header& h, const std::string& descr) {
    if (descr == "bfloat16") {
      h.dtype = DType::BFloat16;
      return;
    }
    const char order = descr.empty() ? '?' : descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') {
      fail(path_, "malformed descr '" + printable(descr) + "'");
    }
    const std::string code = descr.substr(1);
    struct Known {
      std::string_view code;
      DType dtype;
    };
    static constexpr Known kKnown[] = {
        {"b1", DType::Bool},    {"u1", DType::UInt8},    {"i1", DType::Int8},
        {"i2", DType::Int16},   {"i4", DType::Int32},
        {"i8", DType::Int64},   {"f2", DType::Float16},  {"f4", DType::Float32},
        {"f8", DType::Float64}, {"V2", DType::BFloat16}, {"c8", DType::Complex64},
        {"c16", DType::Complex128},
    };
    for (const Known& k : kKnown) {
      if (k.code == code) {
        h.dtype = k.dtype;
        h.swap_bytes = order == '>' && dtype_size(k.dtype) > 1 && k.dtype != DType::BFloat16;
        if (order == '>' && k.dtype == DType::BFloat16) {
          fail(path_,
               "a big-endian void descr '" + printable(descr) + "' is not bfloat16 by convention");
        }
        return;
      }
    }
    const char kind = code.empty() ? '?' : code[0];
    // appended, not "'" + descr: GCC 12 warns falsely (-Wrestrict) on that
    const std::string quoted = std::string("'").append(printable(descr)).append("'");
    const std::string what = kind == 'c'                                 ? "complex"
                             : kind == 'O'                               ? "object (pickled)"
                             : kind == 'U' || kind == 'S' || kind == 'a' ? "string"
                             : kind == 'M' || kind == 'm'                ? "datetime"
                                                                         : quoted;
    throw DTypeError("[npy] " + path_ + ": " + what + " arrays (descr '" + printable(descr) +
                     "') are not supported; mpsim reads bool, uint8, int32, int64, float16, "
                     "bfloat16 ('<V2'), float32 and float64");
  }

  const std::string& path_;
  std::string_view s_;
  std::size_t pos_ = 0;
};

std::uint64_t little_endian(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void swap_elements(void* data, std::size_t count, std::size_t width) {
  auto* b = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < count; ++i) std::reverse(b + i * width, b + (i + 1) * width);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::int64_t d : shape) out += std::to_string(d) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1) out.resize(out.size() - 2);
  return out + ")";
}

}  // namespace

std::string npy_descr(DType dtype) {
  constexpr std::string_view kDescr[] = {"|b1", "|u1", "|i1", "<i2", "<i4", "<i8", "<f2",
                                         "<V2", "<f4", "<f8", "",    "<c8", "<c16"};
  static_assert(std::size(kDescr) == kNumDTypes);
  if (dtype == DType::Complex32) {
    throw DTypeError("[npy] complex32 has no .npy type (NumPy has no complex32): convert it to "
                     "complex64 first");
  }
  return std::string(kDescr[static_cast<int>(dtype)]);
}

Tensor read_npy(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fileno(f.get()), &st) != 0 || !S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);

  unsigned char prefix[12];
  if (file_size < 10 || std::fread(prefix, 1, 10, f.get()) != 10) {
    fail(path, "too short to be a .npy file (" + std::to_string(file_size) + " bytes)");
  }
  if (std::string_view(reinterpret_cast<char*>(prefix), 6) != kMagic) {
    fail(path, "not a .npy file (wrong magic; expected \\x93NUMPY)");
  }
  const int major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0) {
    fail(path, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  std::uint64_t header_len = little_endian(prefix + 8, 2);
  std::uint64_t data_start = 10;
  if (major >= 2) {
    if (std::fread(prefix + 10, 1, 2, f.get()) != 2) fail(path, "truncated header");
    header_len = little_endian(prefix + 8, 4);
    data_start = 12;
  }
  if (header_len > kMaxHeaderBytes) {
    fail(path, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  }
  data_start += header_len;
  if (data_start > file_size) {
    fail(path, "truncated header: " + std::to_string(header_len) + " bytes announced, " +
                   std::to_string(file_size - (data_start - header_len)) + " present");
  }
  std::string text(header_len, '\0');
  if (std::fread(text.data(), 1, header_len, f.get()) != header_len) fail(path, "read error");
  const Header h = HeaderParser(path, text).parse();

  std::int64_t numel = 1;
  for (std::int64_t d : h.shape) {
    if (__builtin_mul_overflow(numel, d, &numel)) fail(path, "the shape's element count overflows");
  }
  std::int64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<std::int64_t>(dtype_size(h.dtype)), &nbytes)) {
    fail(path, "the data size overflows");
  }
  const std::uint64_t present = file_size - data_start;
  const std::string described = "shape " + shape_text(h.shape) + " " +
                                std::string(dtype_name(h.dtype)) + " needs " +
                                std::to_string(nbytes) + " bytes of data";
  if (present < static_cast<std::uint64_t>(nbytes)) {
    fail(path, "truncated data: " + described + ", the file holds " + std::to_string(present));
  }
  if (present > static_cast<std::uint64_t>(nbytes)) {
    fail(path, described + " but the file holds " + std::to_string(present) +
                   " (extra bytes after the data)");
  }

  // Fortran order is C order of the reversed shape; permuting back gives the array.
  std::vector<std::int64_t> stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  Tensor t = empty(Shape(stored), h.dtype);
  if (nbytes > 0 && std::fread(t.data_ptr(), 1, static_cast<std::size_t>(nbytes), f.get()) !=
                        static_cast<std::size_t>(nbytes)) {
    fail(path, "read error in the data");
  }
  if (h.swap_bytes) {  // a complex element swaps each part
    const std::size_t parts = is_complex(t.dtype()) ? 2 : 1;
    swap_elements(t.data_ptr(), static_cast<std::size_t>(numel) * parts, t.element_size() / parts);
  }
  if (h.dtype == DType::Bool) {  // NumPy treats any non-zero byte as True; mpsim stores 0 or 1
    auto* b = static_cast<std::uint8_t*>(t.data_ptr());
    for (std::int64_t i = 0; i < numel; ++i) b[i] = b[i] != 0;
  }
  if (h.fortran_order && t.dim() > 1) {
    IntList reversed(static_cast<std::size_t>(t.dim()));
    for (std::int64_t i = 0; i < t.dim(); ++i)
      reversed[static_cast<std::size_t>(i)] = t.dim() - 1 - i;
    t = t.permute(reversed).contiguous();  // C order (a Fortran file's view is not)
  }
  return t;
}

void write_npy(const std::string& path, const Tensor& t, std::span<const std::string> inputs) {
  if (!t.defined()) throw InvalidArgument("[npy] " + path + ": cannot write an undefined tensor");
  const Tensor c = t.to(Device::cpu()).contiguous();  // synchronizes an mps tensor
  std::string header = "{'descr': '" + npy_descr(c.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape_text(c.sizes().dims()) +
                       ", }";
  // Pad with spaces and a final newline so the data starts on a 64-byte boundary.
  const bool v2 = header.size() + 11 + 64 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header.push_back('\n');
  std::string head(kMagic);
  head.push_back(static_cast<char>(v2 ? 2 : 1));
  head.push_back(0);
  const std::size_t len = header.size();
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    head.push_back(static_cast<char>(len >> (8 * i)));
  head += header;

  write_output_file(
      path, "npy",
      [&](int fd) {
        return write_all(fd, head.data(), head.size()) &&
               (c.nbytes() == 0 || write_all(fd, c.data_ptr(), c.nbytes()));
      },
      inputs);
}

}  // namespace mpsim::tools
