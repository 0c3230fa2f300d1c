// A unit that starts an asynchronous command itself, as some plugins do, with
// no reply address: UnitAsyncProbe.kr(base, where) starts it in its
// constructor (where = 0) or in its first calc call (where = 1). Its
// completion message is a bundle of `/c_set base 7` and `/c_get base`; its
// stages note the order they ran in on control buses base+1 .. base+4
// (stage 2, stage 3, stage 4, cleanup; 0: not run). The unit outputs 0.
#include "SC_PlugIn.h"
#include <cstring>

static InterfaceTable* ft;

struct UnitAsyncProbe : public Unit {
    bool started;
};

struct Notes {
    int base;
    int seq;
};

static void note(World* world, Notes* n, int slot) { world->mControlBus[n->base + slot] = (float)(++n->seq); }

static bool stage2(World* world, void* p) {
    note(world, (Notes*)p, 1);
    return true;
}

static bool stage3(World* world, void* p) {
    note(world, (Notes*)p, 2);
    return true;
}

static bool stage4(World* world, void* p) {
    note(world, (Notes*)p, 3);
    return true;
}

static void cleanup(World* world, void* p) {
    note(world, (Notes*)p, 4);
    RTFree(world, p);
}

static void put32(char*& p, uint32_t v) {
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
    p += 4;
}

static void putstr(char*& p, const char* s, size_t padded) {
    memset(p, 0, padded);
    memcpy(p, s, strlen(s));
    p += padded;
}

// The completion bundle, written into `out` (at least 80 bytes); returns its size.
static int completion(char* out, int bus) {
    char* p = out;
    putstr(p, "#bundle", 8);
    put32(p, 0);
    put32(p, 1); // time tag 1: now
    put32(p, 20); // "/c_set\0\0" ",if\0" bus value
    putstr(p, "/c_set", 8);
    putstr(p, ",if", 4);
    put32(p, (uint32_t)bus);
    float seven = 7.f;
    uint32_t bits;
    memcpy(&bits, &seven, 4);
    put32(p, bits);
    put32(p, 16); // "/c_get\0\0" ",i\0\0" bus
    putstr(p, "/c_get", 8);
    putstr(p, ",i", 4);
    put32(p, (uint32_t)bus);
    return (int)(p - out);
}

static void start(UnitAsyncProbe* unit) {
    unit->started = true;
    Notes* n = (Notes*)RTAlloc(unit->mWorld, sizeof(Notes));
    if (!n)
        return;
    n->base = (int)IN0(0);
    n->seq = 0;
    char msg[96];
    int size = completion(msg, n->base);
    DoAsynchronousCommand(unit->mWorld, nullptr, "unitAsyncProbe", n, stage2, stage3, stage4, cleanup, size, msg);
}

static void UnitAsyncProbe_next(UnitAsyncProbe* unit, int) {
    if (!unit->started)
        start(unit);
    OUT0(0) = 0.f;
}

static void UnitAsyncProbe_Ctor(UnitAsyncProbe* unit) {
    SETCALC(UnitAsyncProbe_next);
    unit->started = false;
    if (IN0(1) == 0.f)
        start(unit);
    OUT0(0) = 0.f;
}

PluginLoad(UnitAsyncProbe) {
    ft = inTable;
    DefineSimpleUnit(UnitAsyncProbe);
}
