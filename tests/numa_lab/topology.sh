# The NUMA lab guest's topology: one definition, sourced by run-lab (to build the QEMU
# command line) and by init inside the guest (to know what qlaunch must report).
# POSIX sh (the guest has busybox ash): plain variables, lists separated by spaces.
#
#   node | CPUs | memory  | 2 MiB pages | distances to 0  1  2  3
#   -----+------+---------+-------------+-----------------------
#     0  | 0 1  | 512 MiB |     40      |              10 20 15 25
#     1  | 2 3  | 512 MiB |     48      |              20 10 30 25
#     2  | none | 512 MiB |     56      |              15 30 10 12
#     3  | none | 512 MiB |     64      |              25 25 12 10
#
# Node 2's nearest node is node 3 (12), which has no CPUs; among nodes with CPUs node 0 (15)
# is nearest, so node 2 falls back to node 0 alone. Node 3 is as far from node 0 as from
# node 1 (25, a tie), and nearest to node 2 (12, no CPUs): it falls back to nodes 0 and 1.
# Pool sizes differ per node so that reading the wrong node shows.

LAB_NODES="0 1 2 3"
LAB_SMP="4,sockets=2,cores=2,threads=1"
LAB_NODE_MIB=512

LAB_CPUS_0="0 1"
LAB_CPUS_1="2 3"
LAB_CPUS_2=""
LAB_CPUS_3=""

LAB_DIST_0="10 20 15 25"
LAB_DIST_1="20 10 30 25"
LAB_DIST_2="15 30 10 12"
LAB_DIST_3="25 25 12 10"

LAB_HUGEPAGES_0=40
LAB_HUGEPAGES_1=48
LAB_HUGEPAGES_2=56
LAB_HUGEPAGES_3=64

# What the planner rules make of this table (docs/planner.md): the CPU nodes a node's
# preallocation threads run on.
LAB_NEAREST_CPU_NODES_0="0"
LAB_NEAREST_CPU_NODES_1="1"
LAB_NEAREST_CPU_NODES_2="0"
LAB_NEAREST_CPU_NODES_3="0 1"
