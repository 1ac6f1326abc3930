// Fuzz target: writing an output file (base/output_file.h, Note [safe outputs]). The first byte
// picks what the path names before the write (nothing, a regular file, a read-only file, a link
// to a file, a dangling link, a directory, /dev/null, /dev/full, the input itself), the second
// whether the writer fails halfway; the rest is the contents. Whatever happens, what the path
// names keeps its kind, a refused or failed write leaves the old contents, a successful one to
// a file leaves exactly the new contents, and no temporary file is left behind.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/error.h"
#include "base/output_file.h"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void broken(const std::string& why) {
  std::fprintf(stderr, "output_fuzz: %s\n", why.c_str());
  std::abort();
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "output_fuzz.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) broken("mkdtemp failed");
    return fs::path(tmpl);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int kind = data[0] % 9;
  const bool fail_midway = (data[1] & 1) != 0;
  const std::string contents(reinterpret_cast<const char*>(data + 2), size - 2);
  const fs::path dir = scratch() / "case";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "out", real = dir / "real", input = dir / "in";
  const std::string old = "old contents";
  write(input, "input");
  std::string path = file.string();
  fs::path written = file;  // where a successful write lands
  bool refused = false;     // the call must throw without writing
  bool device = false;
  switch (kind) {
    case 0:  // nothing there
      break;
    case 1:
      write(file, old);
      break;
    case 2:  // read-only: refused, also for root
      write(file, old);
      fs::permissions(file, fs::perms::owner_read | fs::perms::group_read);
      refused = true;
      break;
    case 3:  // a link to a file: the file is written, the link stays
      write(real, old);
      fs::create_symlink("real", file);
      written = real;
      break;
    case 4:  // a dangling link: its target is created
      fs::create_symlink("real", file);
      written = real;
      break;
    case 5:
      fs::create_directory(file);
      refused = true;
      break;
    case 6:
      path = "/dev/null";
      device = true;
      break;
    case 7:
      path = "/dev/full";
      device = true;
      refused = !contents.empty();  // ENOSPC
      break;
    default:  // the input itself
      path = input.string();
      written = input;
      refused = true;
      break;
  }
  bool threw = false;
  try {
    const std::string inputs[] = {input.string()};
    mpsim::write_output_file(
        path, "output_fuzz",
        [&](int fd) {
          const std::size_t half = fail_midway ? contents.size() / 2 : contents.size();
          if (!mpsim::write_all(fd, contents.data(), half)) return false;
          return !fail_midway;
        },
        inputs);
  } catch (const mpsim::Error&) {
    threw = true;
  }
  if (refused && !threw) broken("a refused case wrote (kind " + std::to_string(kind) + ")");
  if (!device) {
    if (kind == 3 || kind == 4) {
      if (!fs::is_symlink(file)) broken("a link was replaced");
    }
    if (kind == 5 && !fs::is_directory(file)) broken("a directory was replaced");
    if (kind == 8 && read(input) != "input") broken("the input was written");
    if (kind == 2 && read(file) != old) broken("a read-only file changed");
    if (!threw && read(written) != contents) broken("the written file differs");
    if (threw && (kind == 1 || kind == 3) && read(written) != old) {
      broken("a failed write changed the old file");
    }
    if (threw && (kind == 0 || kind == 4) && fs::exists(written)) {
      broken("a failed write left a file");
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().filename().string().find(".tmp.") != std::string::npos) {
        broken("a temporary file was left: " + entry.path().string());
      }
    }
  } else {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) broken(path + " was replaced");
  }
  if (fail_midway && !threw && !device) broken("a failing writer did not raise");
  fs::permissions(dir, fs::perms::all);
  if (fs::exists(file) && !fs::is_symlink(file)) fs::permissions(file, fs::perms::owner_all);
  return 0;
}
