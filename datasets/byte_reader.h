#pragma once
// Bounds-checked reads from an in-memory file. Every parser goes through this, so a truncated or lying header
// becomes a DataError naming the file and the offset instead of a read past the end.
#include <cstddef>
#include <cstdint>
#include <string>

#include "datasets/error.h"

namespace cw::data {

class ByteReader {
public:
    ByteReader(const uint8_t* data, size_t size, std::string source)
        : data_(data), size_(size), source_(std::move(source)) {}

    size_t size() const { return size_; }
    size_t pos() const { return pos_; }
    size_t remaining() const { return size_ - pos_; }
    const std::string& source() const { return source_; }
    const uint8_t* here() const { return data_ + pos_; }
    const uint8_t* base() const { return data_; }

    // Throws "truncated" unless n more bytes exist; `what` says what was being read.
    void need(size_t n, const char* what) const {
        if (n > remaining())
            fail(source_, std::string("truncated while reading ") + what + " at byte " + std::to_string(pos_) +
                              " (need " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left)");
    }
    void skip(size_t n, const char* what) {
        need(n, what);
        pos_ += n;
    }
    void seek(size_t pos) {
        if (pos > size_) fail(source_, "offset " + std::to_string(pos) + " is past the end of the file");
        pos_ = pos;
    }
    uint8_t u8(const char* what) {
        need(1, what);
        return data_[pos_++];
    }
    uint16_t u16_le(const char* what) {
        need(2, what);
        uint16_t v = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
        pos_ += 2;
        return v;
    }
    uint32_t u32_le(const char* what) {
        need(4, what);
        uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | data_[pos_ + i];
        pos_ += 4;
        return v;
    }
    uint32_t u32_be(const char* what) {
        need(4, what);
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v = (v << 8) | data_[pos_ + i];
        pos_ += 4;
        return v;
    }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    std::string source_;
};

}  // namespace cw::data
