// The server's shared memory segment, in the layout SuperCollider 3.13's
// clients expect (common/server_shm.hpp and common/scope_buffer.hpp in its
// sources): a boost.interprocess managed segment named
// "SuperColliderServer_<port>" whose named root object holds the control
// buses and 128 scope buffers. Clients find the root by name and check its
// size, then follow offset pointers, so every type below mirrors the
// reference member for member. Everything else (how scope memory is handed
// out, bookkeeping) is private to this file.
//
// Only creation and destruction allocate or make system calls; the scope
// functions the audio thread calls touch memory and atomics only.

#include <boost/interprocess/containers/vector.hpp>
#include <boost/interprocess/managed_shared_memory.hpp>
#include <boost/interprocess/offset_ptr.hpp>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

namespace bip = boost::interprocess;

namespace {

using Segment = bip::managed_shared_memory;
using FloatPtr = bip::offset_ptr<float>;

constexpr std::size_t kSegmentBytes = 8192 * 1024;
constexpr unsigned kScopeBuffers = 128;
// The reference reserves 8192 floats per scope buffer for their data.
constexpr std::size_t kScopePoolFloats = kScopeBuffers * 8192;

// One scope buffer: a writer (the server) and a reader (the client) swap
// three regions through `stage`; see scope_write_address/push below.
struct ScopeSlot {
    std::atomic<int> status{0}; // 0 free, 1 initialised
    unsigned int max_frames = 0;
    unsigned int channels = 0;
    FloatPtr data;
    std::atomic<int> stage{0};
    int in = 1;  // region the writer fills
    int out = 2; // region the reader reads
    struct Region {
        FloatPtr data;
        unsigned int frames = 0;
        std::atomic<bool> changed{false};
    } regions[3];
};

using SlotPtr = bip::offset_ptr<ScopeSlot>;
using SlotAllocator = bip::allocator<SlotPtr, Segment::segment_manager>;

struct Root {
    explicit Root(Segment::segment_manager* sm): scopes(SlotAllocator(sm)) {}
    std::string unused_name; // part of the reference layout, never read
    FloatPtr control_buses;
    bip::vector<SlotPtr, SlotAllocator> scopes;
};

static_assert(sizeof(ScopeSlot) == 88, "scope buffer layout differs from SuperCollider's");

std::string segment_name(unsigned port) { return "SuperColliderServer_" + std::to_string(port); }

void put_error(char* err, std::size_t len, const char* what) {
    if (err && len)
        std::snprintf(err, len, "%s", what);
}

} // namespace

struct magnetar_shm {
    std::string name;
    Segment segment;
    Root* root = nullptr;
    float* pool = nullptr;
    // Where each scope buffer's data lies in the pool (floats; length 0 = none).
    std::size_t used_start[kScopeBuffers] = {};
    std::size_t used_len[kScopeBuffers] = {};

    magnetar_shm(const std::string& n): name(n), segment(bip::create_only, n.c_str(), kSegmentBytes) {}
};

struct magnetar_shm_client {
    Segment segment;
    Root* root = nullptr;

    explicit magnetar_shm_client(const std::string& n): segment(bip::open_only, n.c_str()) {}
};

extern "C" {

int magnetar_shm_remove(unsigned port) { return bip::shared_memory_object::remove(segment_name(port).c_str()) ? 1 : 0; }

magnetar_shm* magnetar_shm_create(unsigned port, unsigned control_buses, char* err, std::size_t err_len) {
    magnetar_shm* shm = nullptr;
    try {
        const std::string name = segment_name(port);
        bip::shared_memory_object::remove(name.c_str());
        shm = new magnetar_shm(name);
        Segment& seg = shm->segment;
        shm->pool = static_cast<float*>(seg.allocate(kScopePoolFloats * sizeof(float)));
        std::memset(shm->pool, 0, kScopePoolFloats * sizeof(float));
        Root* root = seg.construct<Root>(name.c_str())(seg.get_segment_manager());
        shm->root = root;
        float* buses = static_cast<float*>(seg.allocate(std::size_t(control_buses) * sizeof(float) + sizeof(float)));
        std::memset(buses, 0, std::size_t(control_buses) * sizeof(float));
        root->control_buses = buses;
        root->scopes.reserve(kScopeBuffers);
        for (unsigned i = 0; i < kScopeBuffers; ++i) {
            void* raw = seg.allocate(sizeof(ScopeSlot));
            root->scopes.push_back(SlotPtr(new (raw) ScopeSlot()));
        }
        return shm;
    } catch (const std::exception& e) {
        put_error(err, err_len, e.what());
    } catch (...) {
        put_error(err, err_len, "unknown error");
    }
    if (shm) {
        const std::string name = shm->name;
        delete shm;
        bip::shared_memory_object::remove(name.c_str());
    }
    return nullptr;
}

void magnetar_shm_destroy(magnetar_shm* shm) {
    if (!shm)
        return;
    const std::string name = shm->name;
    try {
        shm->segment.destroy<Root>(name.c_str());
    } catch (...) {
    }
    delete shm;
    bip::shared_memory_object::remove(name.c_str());
}

float* magnetar_shm_control_buses(magnetar_shm* shm) { return shm->root->control_buses.get(); }

// Hands scope buffer `index` to a writer with room for `frames` frames of
// `channels` channels, three times over; null when the index is out of range,
// the buffer is taken, or the pool has no room left. First fit over at most
// 128 ranges: bounded work, no allocation.
float* magnetar_shm_scope_acquire(magnetar_shm* shm, unsigned index, unsigned channels, unsigned frames) {
    if (index >= kScopeBuffers || channels == 0 || frames == 0)
        return nullptr;
    ScopeSlot* slot = shm->root->scopes[index].get();
    if (slot->status.load(std::memory_order_relaxed) != 0)
        return nullptr;
    const std::size_t region = std::size_t(channels) * frames;
    const std::size_t need = region * 3;
    if (need > kScopePoolFloats)
        return nullptr;
    std::size_t start = 0;
    for (bool moved = true; moved;) {
        moved = false;
        for (unsigned i = 0; i < kScopeBuffers; ++i) {
            const std::size_t s = shm->used_start[i], l = shm->used_len[i];
            if (l && start < s + l && s < start + need) {
                start = s + l;
                moved = true;
            }
        }
        if (start + need > kScopePoolFloats)
            return nullptr;
    }
    shm->used_start[index] = start;
    shm->used_len[index] = need;
    float* data = shm->pool + start;
    slot->max_frames = frames;
    slot->channels = channels;
    slot->data = data;
    for (int r = 0; r < 3; ++r) {
        slot->regions[r].data = data + r * region;
        slot->regions[r].frames = 0;
        slot->regions[r].changed.store(false, std::memory_order_relaxed);
    }
    slot->status.store(1, std::memory_order_release);
    return slot->regions[slot->in].data.get();
}

// Publishes the region just written (`frames` frames) and returns the next
// region to write.
float* magnetar_shm_scope_push(magnetar_shm* shm, unsigned index, unsigned frames) {
    ScopeSlot* slot = shm->root->scopes[index].get();
    ScopeSlot::Region& filled = slot->regions[slot->in];
    filled.frames = frames;
    filled.changed.store(true, std::memory_order_relaxed);
    slot->in = slot->stage.exchange(slot->in, std::memory_order_release);
    return slot->regions[slot->in].data.get();
}

void magnetar_shm_scope_release(magnetar_shm* shm, unsigned index) {
    if (index >= kScopeBuffers)
        return;
    ScopeSlot* slot = shm->root->scopes[index].get();
    if (slot->status.load(std::memory_order_relaxed) == 0)
        return;
    shm->used_len[index] = 0;
    slot->status.store(0, std::memory_order_release);
}

// A client, as sclang connects: open the segment and find the root by name.
magnetar_shm_client* magnetar_shm_client_open(unsigned port, char* err, std::size_t err_len) {
    try {
        const std::string name = segment_name(port);
        auto* c = new magnetar_shm_client(name);
        auto found = c->segment.find<Root>(name.c_str());
        if (found.second != 1) {
            delete c;
            put_error(err, err_len, "no server object of the expected size in the segment");
            return nullptr;
        }
        c->root = found.first;
        return c;
    } catch (const std::exception& e) {
        put_error(err, err_len, e.what());
    } catch (...) {
        put_error(err, err_len, "unknown error");
    }
    return nullptr;
}

void magnetar_shm_client_close(magnetar_shm_client* c) { delete c; }

// Copies up to `count` control buses from `first` into `out`; returns how many
// lie inside the segment.
std::size_t magnetar_shm_client_control_buses(magnetar_shm_client* c, std::size_t first, std::size_t count,
                                              float* out) {
    const char* base = static_cast<const char*>(c->segment.get_address());
    const char* end = base + c->segment.get_size();
    const float* buses = c->root->control_buses.get();
    const char* from = reinterpret_cast<const char*>(buses + first);
    if (from < base || from >= end)
        return 0;
    std::size_t room = std::size_t(end - from) / sizeof(float);
    if (count > room)
        count = room;
    std::memcpy(out, buses + first, count * sizeof(float));
    return count;
}

// Reads scope buffer `index` as a client does: when a new region has been
// published, takes it. Writes channels and capacity; returns the frames of
// the region now held (0: none yet or the buffer is not in use) and copies
// up to `out_len` floats of it (channel after channel, `max_frames` apart).
unsigned magnetar_shm_client_scope_pull(magnetar_shm_client* c, unsigned index, unsigned* channels,
                                        unsigned* max_frames, float* out, std::size_t out_len) {
    if (index >= c->root->scopes.size())
        return 0;
    ScopeSlot* slot = c->root->scopes[index].get();
    if (slot->status.load(std::memory_order_acquire) != 1)
        return 0;
    *channels = slot->channels;
    *max_frames = slot->max_frames;
    const int stage = slot->stage.load(std::memory_order_relaxed);
    if (slot->regions[stage].changed.load(std::memory_order_relaxed)) {
        slot->regions[slot->out].changed.store(false, std::memory_order_relaxed);
        slot->out = slot->stage.exchange(slot->out, std::memory_order_acquire);
    }
    const ScopeSlot::Region& held = slot->regions[slot->out];
    std::size_t n = std::size_t(slot->channels) * slot->max_frames;
    if (n > out_len)
        n = out_len;
    if (held.frames)
        std::memcpy(out, held.data.get(), n * sizeof(float));
    return held.frames;
}

} // extern "C"
