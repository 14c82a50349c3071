package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.UnionLayout;

/** Layout of {@code union ibv_gid}: 16 raw bytes, or subnet prefix + interface id (both big-endian). */
final class IbvGid {
    static final UnionLayout LAYOUT = union("ibv_gid",
            chars("raw", 16),
            struct("global", be64("subnet_prefix"), be64("interface_id")));

    static final long SIZE = LAYOUT.byteSize();

    private IbvGid() {
    }
}
