#include "eval/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <fcntl.h>
#include <unistd.h>

namespace cw::eval {

void write_file_atomic(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    if (target.has_parent_path()) fs::create_directories(target.parent_path());
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    auto fail = [&](const std::string& what) {
        const std::string reason = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": " + what + ": " + reason);
    };
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail("cannot create temporary file");
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            ::close(fd);
            fail("write failed");
        }
        done += static_cast<size_t>(w);
    }
    if (::fsync(fd) != 0) {
        ::close(fd);
        fail("fsync failed");
    }
    if (::close(fd) != 0) fail("close failed");
    if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed");
}

std::string read_file_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open for reading");
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

}  // namespace cw::eval
