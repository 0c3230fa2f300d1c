// `/cmd formatProbe bus header sample`: asks the interface table for the
// libsndfile format of a header and a sample format name
// (SndFileFormatInfoFromStrings) and writes the answer on control buses:
// bus = the return code, bus+1 = the format code (-1 where not set).
#include "SC_PlugIn.h"
#include <sndfile.h>

static InterfaceTable* ft;

static void formatProbe(World* world, void*, sc_msg_iter* args, void*) {
    int bus = args->geti(0);
    const char* header = args->gets();
    const char* sample = args->gets();
    SF_INFO info = {};
    info.format = -1;
    int err = (*ft->fSndFileFormatInfoFromStrings)(&info, header, sample);
    world->mControlBus[bus] = (float)err;
    world->mControlBus[bus + 1] = (float)info.format;
}

PluginLoad(FormatProbe) {
    ft = inTable;
    DefinePlugInCmd("formatProbe", formatProbe, nullptr);
}
