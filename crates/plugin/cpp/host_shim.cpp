// The C++ side of magnetar's plugin host.
//
// Every call into plugin code goes through one of the `mg_call_*`
// functions: a C++ exception a plugin throws stops here and becomes an
// error code, instead of unwinding into Rust frames. The rest is what the
// plugin interface needs C++ for: `Print`'s variadic entry, the OSC
// argument iterator plugin commands read, the FFT helpers (FFTW in single
// precision with FFTW_ESTIMATE plans, the library and plans scsynth uses,
// so that spectra match bit for bit) and the layout figures the Rust
// structs are checked against.

#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fftw3.h>

#include "SC_PlugIn.h"
#include "SC_FifoMsg.h"

extern "C" {

// Defined in Rust (src/print.rs): takes one printed piece of text.
void magnetar_plugin_print(const char* text, size_t len);

int mg_print(const char* fmt, ...) {
    char text[2048];
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    if (n < 0)
        return n;
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    magnetar_plugin_print(text, len);
    return n;
}

// Each returns 0, or 1 if the plugin threw.
int mg_call_load(LoadPlugInFunc f, InterfaceTable* table) {
    try {
        f(table);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_unload(UnLoadPlugInFunc f) {
    try {
        f();
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_ctor(UnitCtorFunc f, Unit* unit) {
    try {
        f(unit);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_dtor(UnitDtorFunc f, Unit* unit) {
    try {
        f(unit);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_calc(UnitCalcFunc f, Unit* unit, int n) {
    try {
        f(unit, n);
        return 0;
    } catch (...) {
        return 1;
    }
}

// `args` points at the type tag string (",ifs...") of the command's own
// arguments, `size` bytes to the end of the message.
int mg_call_plugin_cmd(PlugInCmdFunc f, World* world, void* user, const char* args, int size, void* reply) {
    try {
        sc_msg_iter msg(size, args);
        f(world, user, &msg, reply);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_unit_cmd(UnitCmdFunc f, Unit* unit, const char* args, int size) {
    try {
        sc_msg_iter msg(size, args);
        f(unit, &msg);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_async_stage(AsyncStageFn f, World* world, void* data, int* result) {
    try {
        *result = f ? (f(world, data) ? 1 : 0) : 1;
        return 0;
    } catch (...) {
        return 1;
    }
}

// A `/b_gen` generator, its arguments read as `mg_call_plugin_cmd`'s are.
int mg_call_buf_gen(BufGenFunc f, World* world, SndBuf* buf, const char* args, int size) {
    try {
        sc_msg_iter msg(size, args);
        f(world, buf, &msg);
        return 0;
    } catch (...) {
        return 1;
    }
}

// A `FifoMsg`'s perform or free function, given the host's copy of the message.
int mg_call_fifo(void (*f)(void*), void* msg) {
    try {
        f(msg);
        return 0;
    } catch (...) {
        return 1;
    }
}

int mg_call_async_free(AsyncFreeFn f, World* world, void* data) {
    try {
        if (f)
            f(world, data);
        return 0;
    } catch (...) {
        return 1;
    }
}

// ---- layout figures ----------------------------------------------------

// Figure `what` of the structs plugins read by offset, for the Rust side
// to compare with its own (see src/ffi.rs); -1 for an unknown figure.
long mg_layout(int what) {
    switch (what) {
    case 0: return sizeof(InterfaceTable);
    case 1: return sizeof(World);
    case 2: return sizeof(Unit);
    case 3: return sizeof(Wire);
    case 4: return sizeof(Rate);
    case 5: return sizeof(SndBuf);
    case 6: return sizeof(Graph);
    case 7: return sizeof(RGen);
    case 8: return sizeof(Node);
    case 9: return sizeof(FifoMsg);
    case 10: return offsetof(InterfaceTable, fPrint);
    case 11: return offsetof(InterfaceTable, fDefineUnit);
    case 12: return offsetof(InterfaceTable, fRTAlloc);
    case 13: return offsetof(InterfaceTable, fSendNodeReply);
    case 14: return offsetof(InterfaceTable, fNRTLock);
    case 15: return offsetof(InterfaceTable, mUnused0);
    case 16: return offsetof(InterfaceTable, fDoneAction);
    case 17: return offsetof(InterfaceTable, fSCfftCreate);
    case 18: return offsetof(InterfaceTable, fReleaseScopeBuffer);
    case 20: return offsetof(World, mSampleRate);
    case 21: return offsetof(World, mAudioBus);
    case 22: return offsetof(World, mSndBufs);
    case 23: return offsetof(World, mFullRate);
    case 24: return offsetof(World, mBufRate);
    case 25: return offsetof(World, mRGen);
    case 26: return offsetof(World, mSampleOffset);
    case 27: return offsetof(World, mRealTime);
    case 28: return offsetof(World, mSubsampleOffset);
    case 29: return offsetof(World, mRestrictedPath);
    case 30: return offsetof(Unit, mCalcRate);
    case 31: return offsetof(Unit, mDone);
    case 32: return offsetof(Unit, mInput);
    case 33: return offsetof(Unit, mInBuf);
    case 34: return offsetof(Unit, mCalcFunc);
    case 35: return offsetof(Unit, mBufLength);
    case 40: return offsetof(Graph, mNumWires);
    case 41: return offsetof(Graph, mControls);
    case 42: return offsetof(Graph, mRGen);
    case 43: return offsetof(Graph, mLocalSndBufs);
    case 44: return offsetof(Graph, localMaxBufNum);
    case 45: return offsetof(Graph, mSubsampleOffset);
    case 50: return offsetof(SndBuf, data);
    case 51: return offsetof(SndBuf, coord);
    case 52: return offsetof(SndBuf, sndfile);
    case 53: return offsetof(Rate, mBufLength);
    case 54: return offsetof(Rate, mFilterSlope);
    case 55: return offsetof(Wire, mBuffer);
    case 56: return offsetof(Wire, mScalarValue);
    default: return -1;
    }
}

// ---- FFT helpers -------------------------------------------------------
//
// A transform is one chunk from the plugin's allocator: the header, then a
// work buffer two floats longer than the frame (FFTW's r2c output holds
// n/2 + 1 complex values), aligned for FFTW's vector code. Windows and
// plans for every size up to 2^15 are made once (`mg_fft_prepare`), off
// the audio thread, before any plugin code that may ask for a transform
// runs (see `prepare_fft` on the Rust side); larger sizes are refused, and
// so is every size before then.

namespace {

const int kLog2Min = 3;
const int kLog2Max = 15;

struct Transform {
    unsigned int full, win, log2full, log2win;
    int window;
    float *in, *out, *work;
    float scale;
};

float* windows[2][kLog2Max + 1];
fftwf_plan forward_plans[kLog2Max + 1];
fftwf_plan backward_plans[kLog2Max + 1];
// Set, with release order, once the windows and plans are all made.
std::atomic<bool> prepared{false};

unsigned int log2_ceil(size_t n) {
    unsigned int k = 0;
    while (((size_t)1 << k) < n)
        ++k;
    return k;
}

void apply_window(float* data, const Transform* t) {
    if (t->window != kRectWindow) {
        const float* w = windows[t->window][t->log2win];
        for (unsigned int i = 0; i < t->win; ++i)
            data[i] *= w[i];
    }
    if (t->scale != 1.f)
        for (unsigned int i = 0; i < t->win; ++i)
            data[i] *= t->scale;
    std::memset(data + t->win, 0, (t->full - t->win) * sizeof(float));
}

} // namespace

// Makes the windows and plans. Its one caller (`prepare_fft`, behind a Rust
// `Once`) calls it once at most, and never on the audio thread: FFTW's
// planner is not thread-safe. `prepared` only tells `mg_fft_create` that
// the plans are there.
void mg_fft_prepare(void) {
    // The constants are single-precision values widened to double, as
    // scsynth computes its windows.
    const float half_turn = 3.1415926535898f;
    const float full_turn = 6.28318530717952646f;
    for (int k = kLog2Min; k <= kLog2Max; ++k) {
        int size = 1 << k;
        float* sine = (float*)fftwf_malloc(size * sizeof(float));
        float* hann = (float*)fftwf_malloc(size * sizeof(float));
        double sine_step = half_turn / size;
        double hann_step = full_turn / size;
        for (int i = 0; i < size; ++i) {
            sine[i] = std::sin(i * sine_step);
            hann[i] = 0.5 - 0.5 * std::cos(i * hann_step);
        }
        windows[kSineWindow][k] = sine;
        windows[kHannWindow][k] = hann;
    }
    size_t most = (size_t)1 << kLog2Max;
    float* a = (float*)fftwf_malloc((most + 2) * sizeof(float));
    float* b = (float*)fftwf_malloc((most + 2) * sizeof(float));
    for (int k = kLog2Min; k <= kLog2Max; ++k) {
        int size = 1 << k;
        forward_plans[k] = fftwf_plan_dft_r2c_1d(size, a, (fftwf_complex*)a, FFTW_ESTIMATE);
        backward_plans[k] = fftwf_plan_dft_c2r_1d(size, (fftwf_complex*)b, a, FFTW_ESTIMATE);
    }
    fftwf_free(a);
    fftwf_free(b);
    prepared.store(true, std::memory_order_release);
}

static scfft* mg_fft_create(size_t full, size_t win, SCFFT_WindowFunction window, float* in, float* out,
                            SCFFT_Direction direction, SCFFT_Allocator& alloc) {
    unsigned int log2full = log2_ceil(full);
    unsigned int log2win = log2_ceil(win);
    if (!prepared.load(std::memory_order_acquire) || log2full < kLog2Min || log2full > kLog2Max || win > full || log2win < kLog2Min)
        return nullptr;
    const size_t align = 128;
    size_t bytes = sizeof(Transform) + (full + 2) * sizeof(float) + align;
    char* chunk = (char*)alloc.alloc(bytes);
    if (!chunk)
        return nullptr;
    Transform* t = (Transform*)chunk;
    size_t work = ((size_t)(chunk + sizeof(Transform)) + align - 1) & ~(align - 1);
    t->full = (unsigned int)full;
    t->win = (unsigned int)win;
    t->log2full = log2full;
    t->log2win = log2win;
    t->window = window;
    t->in = in;
    t->out = out;
    t->work = (float*)work;
    t->scale = direction == kForward ? 1.f : 1.f / full;
    std::memset(t->work, 0, (full + 2) * sizeof(float));
    return (scfft*)t;
}

static void mg_fft_forward(scfft* f) {
    Transform* t = (Transform*)f;
    std::memcpy(t->work, t->in, t->win * sizeof(float));
    apply_window(t->work, t);
    fftwf_execute_dft_r2c(forward_plans[t->log2full], t->work, (fftwf_complex*)t->work);
    std::memcpy(t->out, t->work, t->full * sizeof(float));
    // The chain format keeps the Nyquist bin's real part where DC's
    // (always zero) imaginary part would be.
    t->out[1] = t->work[t->full];
}

static void mg_fft_backward(scfft* f) {
    Transform* t = (Transform*)f;
    std::memcpy(t->work, t->in, t->full * sizeof(float));
    t->work[1] = 0.f;
    t->work[t->full] = t->in[1];
    t->work[t->full + 1] = 0.f;
    fftwf_execute_dft_c2r(backward_plans[t->log2full], (fftwf_complex*)t->work, t->out);
    apply_window(t->out, t);
}

static void mg_fft_destroy(scfft* f, SCFFT_Allocator& alloc) { alloc.free(f); }

// Puts the FFT helpers and `Print` into the table.
void mg_fill_table(InterfaceTable* table) {
    table->fPrint = mg_print;
    table->fSCfftCreate = mg_fft_create;
    table->fSCfftDoFFT = mg_fft_forward;
    table->fSCfftDoIFFT = mg_fft_backward;
    table->fSCfftDestroy = mg_fft_destroy;
}

} // extern "C"
