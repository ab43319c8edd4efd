// <sound>: the HDA controllers (ich9, ich6) with their codecs, and AC97, on the audio backend
// "audio1".
#include "qemu_cmd/graphics_plan.h"

namespace qlaunch::qemu {

void PlanSoundDevices(const DeviceContext& ctx, std::vector<PlannedDevice>* out) {
  const auto& sounds = ctx.def->devices.sounds;
  for (size_t i = 0; i < sounds.size(); ++i) {
    const domain::Sound& s = sounds[i];
    PlannedDevice d;
    d.family = "graphics";
    d.element = "sound";
    d.line = s.line;
    d.id = "sound" + std::to_string(i);
    d.AtPci(PciRank::kSound, s.address);
    if (s.model == "ac97") {
      d.driver = "AC97";
      d.props = {{"audiodev", kAudioId}};
      out->push_back(std::move(d));
      continue;
    }
    d.driver = s.model == "ich9" ? "ich9-intel-hda" : "intel-hda";
    const std::string hda = d.id;
    out->push_back(std::move(d));
    std::vector<std::string> codecs = s.codecs.empty() ? std::vector<std::string>{"duplex"} : s.codecs;
    for (size_t c = 0; c < codecs.size(); ++c) {
      PlannedDevice codec;
      codec.family = "graphics";
      codec.element = "sound";
      codec.line = s.line;
      codec.driver = "hda-" + codecs[c];
      codec.id = hda + "-codec" + std::to_string(c);
      codec.props = {{"bus", hda + ".0"}, {"cad", std::to_string(c)}, {"audiodev", kAudioId}};
      out->push_back(std::move(codec));
    }
  }
}

}  // namespace qlaunch::qemu
