// A unit that sends a message from the real-time side (SendMsgFromRT) in its
// first calc call; that message's perform function sends one back to the
// real-time side (SendMsgToRT). FifoProbe.kr(base) notes, on control buses
// from `base` on (written by its calc function, every block):
//   base+0   1 if SendMsgFromRT accepted the message
//   base+1   order in which the from-RT perform function ran (0: not run)
//   base+2   1 if it ran on the unit's (real-time) thread
//   base+3   order in which the from-RT free function ran
//   base+4   1 if it ran on the unit's thread
//   base+5   1 if the free function saw what the perform function changed in the message
//   base+6   1 if SendMsgToRT accepted the message
//   base+7   order in which the to-RT perform function ran
//   base+8   1 if it ran on the unit's thread
//   base+9   order in which the to-RT free function ran
//   base+10  1 if it ran on the unit's thread
//   base+11  1 if the to-RT free function ran on the from-RT perform function's thread
#include "SC_PlugIn.h"
#include "SC_FifoMsg.h"
#include <pthread.h>

static InterfaceTable* ft;

enum { kNotes = 12 };

struct State {
    pthread_t rt_thread;
    pthread_t nrt_thread;
    int seq;
    float notes[kNotes];
};

struct FifoProbe : public Unit {
    State* state;
};

static float on_rt(State* s) { return pthread_equal(pthread_self(), s->rt_thread) ? 1.f : 0.f; }

static void to_rt_perform(FifoMsg* msg) {
    State* s = (State*)msg->mData;
    s->notes[7] = (float)(++s->seq);
    s->notes[8] = on_rt(s);
}

static void to_rt_free(FifoMsg* msg) {
    State* s = (State*)msg->mData;
    s->notes[9] = (float)(++s->seq);
    s->notes[10] = on_rt(s);
    s->notes[11] = pthread_equal(pthread_self(), s->nrt_thread) ? 1.f : 0.f;
}

static void from_rt_perform(FifoMsg* msg) {
    State* s = (State*)msg->mData;
    s->nrt_thread = pthread_self();
    s->notes[1] = (float)(++s->seq);
    s->notes[2] = on_rt(s);
    FifoMsg back;
    back.Set(msg->mWorld, to_rt_perform, to_rt_free, s);
    s->notes[6] = SendMsgToRT(msg->mWorld, back) ? 1.f : 0.f;
    // The free function gets this same message: it must see the change.
    msg->mPerformFunc = nullptr;
}

static void from_rt_free(FifoMsg* msg) {
    State* s = (State*)msg->mData;
    s->notes[3] = (float)(++s->seq);
    s->notes[4] = on_rt(s);
    s->notes[5] = msg->mPerformFunc == nullptr ? 1.f : 0.f;
}

static void FifoProbe_next(FifoProbe* unit, int) {
    State* s = unit->state;
    if (!s) {
        s = (State*)RTAlloc(unit->mWorld, sizeof(State));
        if (!s)
            return;
        unit->state = s;
        s->rt_thread = pthread_self();
        s->seq = 0;
        for (int i = 0; i < kNotes; ++i)
            s->notes[i] = 0.f;
        FifoMsg msg;
        msg.Set(unit->mWorld, from_rt_perform, from_rt_free, s);
        s->notes[0] = SendMsgFromRT(unit->mWorld, msg) ? 1.f : 0.f;
        // The queue holds a copy: changing this one changes nothing there.
        msg.mData = nullptr;
        msg.mPerformFunc = nullptr;
    }
    int base = (int)IN0(0);
    for (int i = 0; i < kNotes; ++i)
        unit->mWorld->mControlBus[base + i] = s->notes[i];
    OUT0(0) = 0.f;
}

static void FifoProbe_Ctor(FifoProbe* unit) {
    SETCALC(FifoProbe_next);
    unit->state = nullptr;
    OUT0(0) = 0.f;
}

PluginLoad(FifoProbe) {
    ft = inTable;
    DefineSimpleUnit(FifoProbe);
}
