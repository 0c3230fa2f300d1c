// sclang classes for magnetar's zero-latency convolution units (an extension:
// scsynth does not have them). Put this file in an Extensions folder.
//
//   ~prep = Buffer.new(s);                      // need not be allocated
//   MagnetarConv.prepare(~prep, ~ir);           // /b_gen ... "MagnetarConvPrepare"
//   { MagnetarConv.ar(SoundIn.ar(0), ~prep) }.play;
//
// The server's auto-tuner picks the partition sizes for its block size;
// pass sizes (e.g. [512, 4096]) to choose them. MagnetarConvTD computes the
// same convolution entirely in the unit, for comparison.

MagnetarConv : UGen {
	*ar { arg in, bufnum;
		^this.multiNew('audio', in, bufnum)
	}

	*prepareMsg { arg dest, source, sizes;
		^["/b_gen", dest.asUGenInput, "MagnetarConvPrepare", source.asUGenInput] ++ (sizes ? [])
	}

	*prepare { arg dest, source, sizes;
		var server = source.tryPerform(\server) ? Server.default;
		server.sendMsg(*this.prepareMsg(dest, source, sizes));
	}
}

MagnetarConvTD : MagnetarConv {}
