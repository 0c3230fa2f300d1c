// A plugin command, `/cmd asyncProbe base failAt [completion]`, whose
// asynchronous stages note where and in which order they ran, on control
// buses from `base` on:
//   base+0..3  order in which stage 2, stage 3, stage 4 and the cleanup ran (0: not run)
//   base+5..8  1 where that ran on the thread that ran the command, else 0
//   base+9     1 where stage 4 ran on stage 2's thread
// Stage `failAt` (2, 3 or 4) answers false.
#include "SC_PlugIn.h"
#include <pthread.h>

static InterfaceTable* ft;

struct ProbeData {
    pthread_t command_thread;
    pthread_t stage2_thread;
    int base;
    int fail_at;
    int seq;
};

static void note(World* world, ProbeData* d, int slot) {
    world->mControlBus[d->base + slot] = (float)(++d->seq);
    world->mControlBus[d->base + 5 + slot] = pthread_equal(pthread_self(), d->command_thread) ? 1.f : 0.f;
}

static bool stage2(World* world, void* p) {
    ProbeData* d = (ProbeData*)p;
    d->stage2_thread = pthread_self();
    note(world, d, 0);
    return d->fail_at != 2;
}

static bool stage3(World* world, void* p) {
    ProbeData* d = (ProbeData*)p;
    note(world, d, 1);
    return d->fail_at != 3;
}

static bool stage4(World* world, void* p) {
    ProbeData* d = (ProbeData*)p;
    note(world, d, 2);
    world->mControlBus[d->base + 9] = pthread_equal(pthread_self(), d->stage2_thread) ? 1.f : 0.f;
    return d->fail_at != 4;
}

static void cleanup(World* world, void* p) {
    ProbeData* d = (ProbeData*)p;
    note(world, d, 3);
    RTFree(world, d);
}

static void asyncProbe(World* world, void*, sc_msg_iter* args, void* replyAddr) {
    ProbeData* d = (ProbeData*)RTAlloc(world, sizeof(ProbeData));
    if (!d)
        return;
    d->command_thread = pthread_self();
    d->base = args->geti(0);
    d->fail_at = args->geti(0);
    d->seq = 0;
    int size = args->getbsize();
    char* completion = nullptr;
    if (size > 0) {
        completion = (char*)RTAlloc(world, size);
        args->getb(completion, size);
    }
    DoAsynchronousCommand(world, replyAddr, "asyncProbe", d, stage2, stage3, stage4, cleanup, size, completion);
    if (completion)
        RTFree(world, completion);
}

PluginLoad(AsyncProbe) {
    ft = inTable;
    DefinePlugInCmd("asyncProbe", asyncProbe, nullptr);
}
