package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layouts of {@code struct ibv_srq_attr} and {@code struct ibv_srq_init_attr}. */
final class IbvSrqAttr {
    static final StructLayout LAYOUT = struct("ibv_srq_attr",
            u32("max_wr"),
            u32("max_sge"),
            u32("srq_limit"));

    static final StructLayout INIT_LAYOUT = struct("ibv_srq_init_attr",
            ptr("srq_context"),
            LAYOUT.withName("attr"));

    static final long SIZE = LAYOUT.byteSize();
    static final long MAX_WR = offset(LAYOUT, "max_wr");
    static final long MAX_SGE = offset(LAYOUT, "max_sge");
    static final long SRQ_LIMIT = offset(LAYOUT, "srq_limit");

    static final long INIT_SIZE = INIT_LAYOUT.byteSize();
    static final long INIT_SRQ_CONTEXT = offset(INIT_LAYOUT, "srq_context");
    static final long INIT_ATTR = offset(INIT_LAYOUT, "attr");

    private IbvSrqAttr() {
    }
}
