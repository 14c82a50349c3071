package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * Layout of the leading members of {@code struct ibv_context}, including the whole
 * {@code struct ibv_context_ops} whose function pointers stand in for the header's static inline verbs.
 */
final class IbvContextStruct {
    static final StructLayout OPS = struct("ops",
            ptr("_compat_query_device"),
            ptr("_compat_query_port"),
            ptr("_compat_alloc_pd"),
            ptr("_compat_dealloc_pd"),
            ptr("_compat_reg_mr"),
            ptr("_compat_rereg_mr"),
            ptr("_compat_dereg_mr"),
            ptr("alloc_mw"),
            ptr("bind_mw"),
            ptr("dealloc_mw"),
            ptr("_compat_create_cq"),
            ptr("poll_cq"),
            ptr("req_notify_cq"),
            ptr("_compat_cq_event"),
            ptr("_compat_resize_cq"),
            ptr("_compat_destroy_cq"),
            ptr("_compat_create_srq"),
            ptr("_compat_modify_srq"),
            ptr("_compat_query_srq"),
            ptr("_compat_destroy_srq"),
            ptr("post_srq_recv"),
            ptr("_compat_create_qp"),
            ptr("_compat_query_qp"),
            ptr("_compat_modify_qp"),
            ptr("_compat_destroy_qp"),
            ptr("post_send"),
            ptr("post_recv"),
            ptr("_compat_create_ah"),
            ptr("_compat_destroy_ah"),
            ptr("_compat_attach_mcast"),
            ptr("_compat_detach_mcast"),
            ptr("_compat_async_event"));

    static final StructLayout LAYOUT = structPrefix("ibv_context",
            ptr("device"),
            OPS,
            s32("cmd_fd"),
            s32("async_fd"),
            s32("num_comp_vectors"),
            MemoryLayout.sequenceLayout(5, U64).withName("mutex"), // pthread_mutex_t: 40 bytes, 8-aligned
            ptr("abi_compat"));

    static final long SIZE = LAYOUT.byteSize();
    static final long DEVICE = offset(LAYOUT, "device");
    static final long OPS_ALLOC_MW = offset(LAYOUT, "ops.alloc_mw");
    static final long OPS_BIND_MW = offset(LAYOUT, "ops.bind_mw");
    static final long OPS_DEALLOC_MW = offset(LAYOUT, "ops.dealloc_mw");
    static final long OPS_POLL_CQ = offset(LAYOUT, "ops.poll_cq");
    static final long OPS_REQ_NOTIFY_CQ = offset(LAYOUT, "ops.req_notify_cq");
    static final long OPS_POST_SRQ_RECV = offset(LAYOUT, "ops.post_srq_recv");
    static final long OPS_POST_SEND = offset(LAYOUT, "ops.post_send");
    static final long OPS_POST_RECV = offset(LAYOUT, "ops.post_recv");
    static final long CMD_FD = offset(LAYOUT, "cmd_fd");
    static final long ASYNC_FD = offset(LAYOUT, "async_fd");
    static final long NUM_COMP_VECTORS = offset(LAYOUT, "num_comp_vectors");
    static final long ABI_COMPAT = offset(LAYOUT, "abi_compat");
    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code abi_compat} of a context that is the tail of a {@code struct verbs_context}. */
    static final long ABI_IS_EXTENDED = -1L;

    // struct verbs_context ends with the struct ibv_context the application sees; its extended ops lie before it
    /** {@code offsetof(struct verbs_context, context)}. */
    static final long VERBS_CONTEXT = 320;
    /** {@code offsetof(struct verbs_context, sz)}: how many bytes of the verbs_context the provider filled. */
    static final long VERBS_SZ = 312;
    /** {@code offsetof(struct verbs_context, query_device_ex)}. */
    static final long VERBS_QUERY_DEVICE_EX = 216;
    /** {@code sizeof(struct verbs_context)} in the header the offsets come from. */
    static final long VERBS_SIZE = 648;

    private IbvContextStruct() {
    }
}
