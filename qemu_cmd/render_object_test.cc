#include "qemu_cmd/render_object.h"

#include <gtest/gtest.h>

#include "tests/support/plan_fixtures.h"
#include "tests/support/qemu_opts_split.h"

namespace qlaunch::qemu {
namespace {

using testing::Caps52;
using testing::Caps72;

MemoryBackend HugeFileBackend() {
  MemoryBackend b;
  b.id = "ram-node1";
  b.type = BackendType::kFile;
  b.mem_path = "/dev/hugepages2M/qlaunch/vm";
  b.page_size_bytes = 2 << 20;
  b.shared = true;
  b.share_explicit = true;
  b.prealloc = PreallocBy::kQemu;
  b.prealloc_threads = 4;
  b.size_bytes = 1073741824;
  b.host_nodes = IdSet{0, 1, 2, 3};
  b.policy = "bind";
  b.thread_context = "tc-ram-node1";
  return b;
}

TEST(RenderBackendObject, JsonKeysInLibvirtOrder) {
  EXPECT_EQ(RenderBackendObject(HugeFileBackend(), Caps72()),
            R"({"qom-type":"memory-backend-file","id":"ram-node1","mem-path":"/dev/hugepages2M/qlaunch/vm",)"
            R"("share":true,"prealloc":true,"prealloc-threads":4,"size":1073741824,"host-nodes":[0,1,2,3],)"
            R"("policy":"bind","prealloc-context":"tc-ram-node1"})");
}

TEST(RenderBackendObject, MemfdHugetlbMatchesLibvirtCorpusLine) {
  // memfd-memory-numa.x86_64-latest.args, ram-node0, character for character.
  MemoryBackend b;
  b.id = "ram-node0";
  b.type = BackendType::kMemfd;
  b.page_size_bytes = 2097152;
  b.shared = true;
  b.share_explicit = true;
  b.prealloc = PreallocBy::kQemu;
  b.prealloc_threads = 8;
  b.size_bytes = 15032385536;
  b.host_nodes = IdSet{3};
  b.policy = "preferred";
  b.thread_context = "tc-ram-node0";
  EXPECT_EQ(RenderBackendObject(b, Caps72()),
            R"({"qom-type":"memory-backend-memfd","id":"ram-node0","hugetlb":true,"hugetlbsize":2097152,)"
            R"("share":true,"prealloc":true,"prealloc-threads":8,"size":15032385536,"host-nodes":[3],)"
            R"("policy":"preferred","prealloc-context":"tc-ram-node0"})");
}

TEST(RenderBackendObject, PlainRamHasOnlyTypeIdSize) {
  MemoryBackend b;
  b.id = "ram-node0";
  b.size_bytes = 112197632;
  EXPECT_EQ(RenderBackendObject(b, Caps72()), R"({"qom-type":"memory-backend-ram","id":"ram-node0","size":112197632})");
  EXPECT_EQ(RenderBackendObject(b, Caps52()), "memory-backend-ram,id=ram-node0,size=112197632");
}

TEST(RenderBackendObject, DiscardDataComesBeforeShare) {
  // pages-dimm-discard.x86_64-latest.args, memdimm1 (with our backing directory).
  MemoryBackend b;
  b.id = "memdimm1";
  b.type = BackendType::kFile;
  b.mem_path = "/run/qlaunch/fedora/ram";
  b.discard = true;
  b.share_explicit = false;
  b.size_bytes = 536870912;
  EXPECT_EQ(RenderBackendObject(b, Caps72()),
            R"({"qom-type":"memory-backend-file","id":"memdimm1","mem-path":"/run/qlaunch/fedora/ram",)"
            R"("discard-data":true,"share":false,"size":536870912})");
}

TEST(RenderBackendObject, DiscardNoIsSpelledOutOnlyWhenTheDomainSaysIt) {
  // pages-dimm-discard.x86_64-latest.args, memdimm0 (discard='no'): "discard-data":false.
  MemoryBackend b;
  b.id = "memdimm0";
  b.type = BackendType::kFile;
  b.mem_path = "/dev/hugepages1G/qlaunch/fedora";
  b.size_bytes = 1073741824;
  EXPECT_EQ(RenderBackendObject(b, Caps72()).find("discard-data"), std::string::npos) << "said nothing";
  b.discard = false;
  EXPECT_EQ(RenderBackendObject(b, Caps72()),
            R"({"qom-type":"memory-backend-file","id":"memdimm0","mem-path":"/dev/hugepages1G/qlaunch/fedora",)"
            R"("discard-data":false,"size":1073741824})");
  EXPECT_EQ(RenderBackendObject(b, Caps52()),
            "memory-backend-file,id=memdimm0,mem-path=/dev/hugepages1G/qlaunch/fedora,discard-data=off,size=1073741824");
}

TEST(RenderBackendObject, ShareIsNeverSetOnRam) {
  MemoryBackend b;
  b.id = "x";
  b.size_bytes = 1 << 20;
  b.share_explicit = true;  // not meaningful for memory-backend-ram; the planner never does this
  EXPECT_EQ(RenderBackendObject(b, Caps72()).find("share"), std::string::npos);
}

TEST(RenderBackendObject, LauncherBackendIsASharedFileOnItsFd) {
  MemoryBackend b = HugeFileBackend();
  b.id = "ram-node0";
  b.type = BackendType::kMemfd;
  b.prealloc = PreallocBy::kLauncher;
  b.launcher_fd = 3;
  b.mem_path = "/proc/self/fd/3";
  b.prealloc_threads = 0;
  b.thread_context.clear();
  b.host_nodes = IdSet{0};
  EXPECT_EQ(RenderBackendObject(b, Caps72()),
            R"({"qom-type":"memory-backend-file","id":"ram-node0","mem-path":"/proc/self/fd/3","share":true,)"
            R"("prealloc":false,"size":1073741824,"host-nodes":[0],"policy":"bind"})");
  EXPECT_EQ(RenderBackendObject(b, Caps52()),
            "memory-backend-file,id=ram-node0,mem-path=/proc/self/fd/3,share=on,prealloc=off,size=1073741824,"
            "host-nodes=0,policy=bind");
}

TEST(RenderBackendObject, KeyValueSyntaxForOldQemu) {
  MemoryBackend b = HugeFileBackend();
  b.thread_context.clear();
  EXPECT_EQ(RenderBackendObject(b, Caps52()),
            "memory-backend-file,id=ram-node1,mem-path=/dev/hugepages2M/qlaunch/vm,share=on,prealloc=on,"
            "prealloc-threads=4,size=1073741824,host-nodes=0-3,policy=bind");
}

TEST(RenderBackendObject, KeyValueSparseNodesRepeatTheKey) {
  MemoryBackend b;
  b.id = "ram-node0";
  b.size_bytes = 1 << 20;
  b.host_nodes = IdSet{0, 2};
  b.policy = "interleave";
  EXPECT_EQ(RenderBackendObject(b, Caps52()),
            "memory-backend-ram,id=ram-node0,size=1048576,host-nodes=0,host-nodes=2,policy=interleave");
  EXPECT_EQ(RenderBackendObject(b, Caps72()),
            R"({"qom-type":"memory-backend-ram","id":"ram-node0","size":1048576,"host-nodes":[0,2],"policy":"interleave"})");
}

TEST(RenderBackendObject, KeyValueEscapesThePath) {
  MemoryBackend b;
  b.id = "pc.ram";
  b.type = BackendType::kFile;
  b.mem_path = "/dev/hugepages/qlaunch/a,share=on,x";
  b.prealloc = PreallocBy::kQemu;
  b.size_bytes = 2 << 20;
  std::string s = RenderBackendObject(b, Caps52());
  auto pairs = testing::QemuOptsPairs(s);
  std::vector<std::pair<std::string, std::string>> want = {
      {"", "memory-backend-file"}, {"id", "pc.ram"}, {"mem-path", "/dev/hugepages/qlaunch/a,share=on,x"},
      {"prealloc", "on"}, {"size", "2097152"}};
  EXPECT_EQ(pairs, want) << s;
}

TEST(RenderThreadContextObject, BothSyntaxes) {
  ThreadContext tc{"tc-ram-node0", IdSet{0, 1, 3}, IdSet{0, 1, 2, 3, 4, 5, 6, 7, 12}};
  EXPECT_EQ(RenderThreadContextObject(tc, Caps72()),
            R"({"qom-type":"thread-context","id":"tc-ram-node0","node-affinity":[0,1,3]})");
  EXPECT_EQ(RenderThreadContextObject(tc, Caps52()),
            "thread-context,id=tc-ram-node0,node-affinity=0-1,node-affinity=3");
}

TEST(RenderNumaNode, DisjointCpusRepeatTheKey) {
  // cpu-numa-disjoint.x86_64-latest.args
  EXPECT_EQ(RenderNumaNode(0, IdSet{0, 1, 2, 3, 8, 9, 10, 11}, "ram-node0"),
            "node,nodeid=0,cpus=0-3,cpus=8-11,memdev=ram-node0");
  EXPECT_EQ(RenderNumaNode(1, IdSet{1}, "ram-node1"), "node,nodeid=1,cpus=1,memdev=ram-node1");
  EXPECT_EQ(RenderNumaNode(2, IdSet{}, "ram-node2"), "node,nodeid=2,memdev=ram-node2");
}

TEST(RenderMemoryDevice, SlotAndAddrOnlyWhenGiven) {
  MemoryDeviceArg d{.driver = "pc-dimm", .id = "dimm0", .memdev = "memdimm0", .node = 1, .slot = 0u,
                    .addr = 4294967296ull, .requested_size = {}, .pci_address = {}};
  EXPECT_EQ(RenderMemoryDevice(d), "pc-dimm,node=1,memdev=memdimm0,id=dimm0,slot=0,addr=4294967296");
  MemoryDeviceArg n{.driver = "nvdimm", .id = "nvdimm1", .memdev = "memnvdimm1", .node = 0, .slot = std::nullopt,
                    .addr = std::nullopt, .requested_size = {}, .pci_address = {}};
  EXPECT_EQ(RenderMemoryDevice(n), "nvdimm,node=0,memdev=memnvdimm1,id=nvdimm1");
}

}  // namespace
}  // namespace qlaunch::qemu
