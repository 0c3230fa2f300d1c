// A `/b_gen` generator, `/b_gen buf "probeResize" frames channels value`,
// that gives the buffer a new size with BufAlloc: the first samples keep
// the old contents (read while the generator runs), the rest are `value`.
// `/b_gen buf "probeRate" rate` sets only the buffer's sample rate.
#include "SC_PlugIn.h"

static InterfaceTable* ft;

static void probeResize(World* world, SndBuf* buf, sc_msg_iter* msg) {
    int frames = msg->geti(0);
    int channels = msg->geti(1);
    float value = msg->getf(0.f);
    const float* old = buf->data;
    int old_samples = old ? buf->samples : 0;
    if (BufAlloc(buf, channels, frames, world->mFullRate.mSampleRate) != 0)
        return;
    for (int i = 0; i < buf->samples; ++i)
        buf->data[i] = i < old_samples ? old[i] : value;
}

static void probeRate(World*, SndBuf* buf, sc_msg_iter* msg) {
    buf->samplerate = msg->getf(0.f);
    buf->sampledur = 1. / buf->samplerate;
}

PluginLoad(BufGenProbe) {
    ft = inTable;
    DefineBufGen("probeResize", probeResize);
    DefineBufGen("probeRate", probeRate);
}
