package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_comp_channel}. */
final class IbvCompChannelStruct {
    static final StructLayout LAYOUT = struct("ibv_comp_channel",
            ptr("context"),
            s32("fd"),
            s32("refcnt"));

    static final long SIZE = LAYOUT.byteSize();
    static final long FD = offset(LAYOUT, "fd");

    private IbvCompChannelStruct() {
    }
}
