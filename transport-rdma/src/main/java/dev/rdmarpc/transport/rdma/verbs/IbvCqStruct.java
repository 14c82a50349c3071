package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of the leading members of {@code struct ibv_cq} (library-allocated; never allocated here). */
final class IbvCqStruct {
    static final StructLayout LAYOUT = structPrefix("ibv_cq",
            ptr("context"),
            ptr("channel"),
            ptr("cq_context"),
            u32("handle"),
            s32("cqe"));

    static final long SIZE = LAYOUT.byteSize();
    static final long CONTEXT = offset(LAYOUT, "context");
    static final long CQE = offset(LAYOUT, "cqe");

    private IbvCqStruct() {
    }
}
