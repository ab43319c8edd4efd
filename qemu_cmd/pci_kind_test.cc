#include "qemu_cmd/pci_kind.h"

#include <gtest/gtest.h>

namespace qlaunch::qemu {
namespace {

TEST(PciKind, ByDriver) {
  EXPECT_EQ(PciKindOf("virtio-net-pci"), PciKind::kVirtio);
  EXPECT_EQ(PciKindOf("virtio-vga"), PciKind::kVirtio);
  EXPECT_EQ(PciKindOf("virtio-net-pci-transitional"), PciKind::kConventional);
  EXPECT_EQ(PciKindOf("qemu-xhci"), PciKind::kExpress);
  EXPECT_EQ(PciKindOf("e1000e"), PciKind::kExpress);
  for (const char* d : {"e1000", "rtl8139", "VGA", "cirrus-vga", "qxl-vga", "ich9-intel-hda", "AC97", "i6300esb", "lsi",
                        "ahci", "ich9-usb-ehci1", "piix3-usb-uhci"})
    EXPECT_EQ(PciKindOf(d), PciKind::kConventional) << d;
}

}  // namespace
}  // namespace qlaunch::qemu
