// A unit that takes memory with malloc and new[] in its calc function while
// its input is positive (tests/realtime/test_plugin_units.py): the heap
// counts must see it.
#include "SC_PlugIn.h"
#include <cstdlib>

static InterfaceTable* ft;

struct MallocProbe : public Unit {};

// The pointers escape here, so the compiler keeps every allocation.
static float* volatile g_kept;

static void MallocProbe_next(MallocProbe* unit, int inNumSamples) {
    float v = 0.f;
    if (IN0(0) > 0.f) {
        float* p = static_cast<float*>(malloc(sizeof(float) * 64));
        g_kept = p;
        p[0] = 1.f;
        v = g_kept[0];
        free(p);
        float* q = new float[64];
        g_kept = q;
        q[0] = 0.5f;
        v += g_kept[0];
        delete[] q;
    }
    OUT0(0) = v;
}

static void MallocProbe_Ctor(MallocProbe* unit) {
    SETCALC(MallocProbe_next);
    OUT0(0) = 0.f;
}

PluginLoad(MallocProbe) {
    ft = inTable;
    DefineSimpleUnit(MallocProbe);
}
