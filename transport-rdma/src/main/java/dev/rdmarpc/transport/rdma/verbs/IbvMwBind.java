package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_mw_bind} (argument of the type-1 {@code ops.bind_mw}). */
final class IbvMwBind {
    static final StructLayout LAYOUT = struct("ibv_mw_bind",
            u64("wr_id"),
            u32("send_flags"),
            IbvSendWr.MW_BIND_INFO.withName("bind_info"));

    static final long SIZE = LAYOUT.byteSize();
    static final long WR_ID = offset(LAYOUT, "wr_id");
    static final long SEND_FLAGS = offset(LAYOUT, "send_flags");
    static final long MR = offset(LAYOUT, "bind_info.mr");
    static final long ADDR = offset(LAYOUT, "bind_info.addr");
    static final long LENGTH = offset(LAYOUT, "bind_info.length");
    static final long ACCESS = offset(LAYOUT, "bind_info.mw_access_flags");

    private IbvMwBind() {
    }
}
