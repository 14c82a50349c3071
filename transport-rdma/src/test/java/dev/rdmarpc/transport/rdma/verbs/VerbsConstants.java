package dev.rdmarpc.transport.rdma.verbs;

import java.util.LinkedHashMap;
import java.util.Map;

/** Every C enum value the Java side hard-codes, by its C name, for the layout test to compare with the header. */
final class VerbsConstants {
    static final Map<String, Long> ALL = build();

    private VerbsConstants() {
    }

    private static Map<String, Long> build() {
        Map<String, Long> m = new LinkedHashMap<>();
        // access flags
        m.put("IBV_ACCESS_LOCAL_WRITE", (long) AccessFlags.LOCAL_WRITE);
        m.put("IBV_ACCESS_REMOTE_WRITE", (long) AccessFlags.REMOTE_WRITE);
        m.put("IBV_ACCESS_REMOTE_READ", (long) AccessFlags.REMOTE_READ);
        m.put("IBV_ACCESS_REMOTE_ATOMIC", (long) AccessFlags.REMOTE_ATOMIC);
        m.put("IBV_ACCESS_MW_BIND", (long) AccessFlags.MW_BIND);
        m.put("IBV_ACCESS_ZERO_BASED", (long) AccessFlags.ZERO_BASED);
        m.put("IBV_ACCESS_ON_DEMAND", (long) AccessFlags.ON_DEMAND);
        m.put("IBV_ACCESS_HUGETLB", (long) AccessFlags.HUGETLB);
        m.put("IBV_ACCESS_RELAXED_ORDERING", (long) AccessFlags.RELAXED_ORDERING);
        // on-demand paging capabilities, and where ibv_query_device_ex's op lives
        m.put("IBV_ODP_SUPPORT", OdpCapabilities.SUPPORT);
        m.put("IBV_ODP_SUPPORT_IMPLICIT", OdpCapabilities.SUPPORT_IMPLICIT);
        m.put("IBV_ODP_SUPPORT_SEND", (long) OdpCapabilities.RC_SEND);
        m.put("IBV_ODP_SUPPORT_RECV", (long) OdpCapabilities.RC_RECV);
        m.put("IBV_ODP_SUPPORT_WRITE", (long) OdpCapabilities.RC_WRITE);
        m.put("IBV_ODP_SUPPORT_READ", (long) OdpCapabilities.RC_READ);
        m.put("IBV_ODP_SUPPORT_ATOMIC", (long) OdpCapabilities.RC_ATOMIC);
        m.put("IBV_ODP_SUPPORT_SRQ_RECV", (long) OdpCapabilities.RC_SRQ_RECV);
        m.put("sizeof(struct ibv_device_attr_ex)", IbvDeviceAttrEx.SIZE);
        m.put("offsetof(struct verbs_context, context)", IbvContextStruct.VERBS_CONTEXT);
        m.put("offsetof(struct verbs_context, sz)", IbvContextStruct.VERBS_SZ);
        m.put("offsetof(struct verbs_context, query_device_ex)", IbvContextStruct.VERBS_QUERY_DEVICE_EX);
        m.put("sizeof(struct verbs_context)", IbvContextStruct.VERBS_SIZE);
        m.put("(long long)__VERBS_ABI_IS_EXTENDED", IbvContextStruct.ABI_IS_EXTENDED);
        // QP types, states, attribute masks
        m.put("IBV_QPT_RC", (long) QueuePairConfig.TYPE_RC);
        m.put("IBV_QPT_UC", (long) QueuePairConfig.TYPE_UC);
        m.put("IBV_QPT_UD", (long) QueuePairConfig.TYPE_UD);
        m.put("IBV_QPS_RESET", (long) QpState.RESET);
        m.put("IBV_QPS_INIT", (long) QpState.INIT);
        m.put("IBV_QPS_RTR", (long) QpState.RTR);
        m.put("IBV_QPS_RTS", (long) QpState.RTS);
        m.put("IBV_QPS_SQD", (long) QpState.SQD);
        m.put("IBV_QPS_SQE", (long) QpState.SQE);
        m.put("IBV_QPS_ERR", (long) QpState.ERR);
        m.put("IBV_QPS_UNKNOWN", (long) QpState.UNKNOWN);
        m.put("IBV_QP_STATE", (long) QueuePair.ATTR_STATE);
        m.put("IBV_QP_CUR_STATE", (long) QueuePair.ATTR_CUR_STATE);
        m.put("IBV_QP_ACCESS_FLAGS", (long) QueuePair.ATTR_ACCESS_FLAGS);
        m.put("IBV_QP_PKEY_INDEX", (long) QueuePair.ATTR_PKEY_INDEX);
        m.put("IBV_QP_PORT", (long) QueuePair.ATTR_PORT);
        m.put("IBV_QP_QKEY", (long) QueuePair.ATTR_QKEY);
        m.put("IBV_QP_AV", (long) QueuePair.ATTR_AV);
        m.put("IBV_QP_PATH_MTU", (long) QueuePair.ATTR_PATH_MTU);
        m.put("IBV_QP_TIMEOUT", (long) QueuePair.ATTR_TIMEOUT);
        m.put("IBV_QP_RETRY_CNT", (long) QueuePair.ATTR_RETRY_CNT);
        m.put("IBV_QP_RNR_RETRY", (long) QueuePair.ATTR_RNR_RETRY);
        m.put("IBV_QP_RQ_PSN", (long) QueuePair.ATTR_RQ_PSN);
        m.put("IBV_QP_MAX_QP_RD_ATOMIC", (long) QueuePair.ATTR_MAX_QP_RD_ATOMIC);
        m.put("IBV_QP_MIN_RNR_TIMER", (long) QueuePair.ATTR_MIN_RNR_TIMER);
        m.put("IBV_QP_SQ_PSN", (long) QueuePair.ATTR_SQ_PSN);
        m.put("IBV_QP_MAX_DEST_RD_ATOMIC", (long) QueuePair.ATTR_MAX_DEST_RD_ATOMIC);
        m.put("IBV_QP_CAP", (long) QueuePair.ATTR_CAP);
        m.put("IBV_QP_DEST_QPN", (long) QueuePair.ATTR_DEST_QPN);
        m.put("IBV_SRQ_MAX_WR", (long) SharedReceiveQueue.ATTR_MAX_WR);
        m.put("IBV_SRQ_LIMIT", (long) SharedReceiveQueue.ATTR_LIMIT);
        // MTU, port
        m.put("IBV_MTU_256", (long) PortAttributes.MTU_256);
        m.put("IBV_MTU_512", (long) PortAttributes.MTU_512);
        m.put("IBV_MTU_1024", (long) PortAttributes.MTU_1024);
        m.put("IBV_MTU_2048", (long) PortAttributes.MTU_2048);
        m.put("IBV_MTU_4096", (long) PortAttributes.MTU_4096);
        m.put("IBV_PORT_DOWN", (long) PortAttributes.STATE_DOWN);
        m.put("IBV_PORT_INIT", (long) PortAttributes.STATE_INIT);
        m.put("IBV_PORT_ARMED", (long) PortAttributes.STATE_ARMED);
        m.put("IBV_PORT_ACTIVE", (long) PortAttributes.STATE_ACTIVE);
        m.put("IBV_LINK_LAYER_INFINIBAND", (long) PortAttributes.LINK_LAYER_INFINIBAND);
        m.put("IBV_LINK_LAYER_ETHERNET", (long) PortAttributes.LINK_LAYER_ETHERNET);
        m.put("IBV_DEVICE_MEM_WINDOW", (long) DeviceAttributes.CAP_MEM_WINDOW);
        m.put("IBV_DEVICE_SRQ_RESIZE", (long) DeviceAttributes.CAP_SRQ_RESIZE);
        m.put("IBV_DEVICE_MEM_WINDOW_TYPE_2A", (long) DeviceAttributes.CAP_MEM_WINDOW_TYPE_2A);
        m.put("IBV_DEVICE_MEM_WINDOW_TYPE_2B", (long) DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B);
        m.put("IBV_DEVICE_MEM_MGT_EXTENSIONS", (long) DeviceAttributes.CAP_MEM_MGT_EXTENSIONS);
        // send WRs
        m.put("IBV_WR_RDMA_WRITE", (long) SendWorkRequest.OPCODE_RDMA_WRITE);
        m.put("IBV_WR_RDMA_WRITE_WITH_IMM", (long) SendWorkRequest.OPCODE_RDMA_WRITE_WITH_IMM);
        m.put("IBV_WR_SEND", (long) SendWorkRequest.OPCODE_SEND);
        m.put("IBV_WR_SEND_WITH_IMM", (long) SendWorkRequest.OPCODE_SEND_WITH_IMM);
        m.put("IBV_WR_RDMA_READ", (long) SendWorkRequest.OPCODE_RDMA_READ);
        m.put("IBV_WR_ATOMIC_CMP_AND_SWP", (long) SendWorkRequest.OPCODE_ATOMIC_CMP_AND_SWP);
        m.put("IBV_WR_ATOMIC_FETCH_AND_ADD", (long) SendWorkRequest.OPCODE_ATOMIC_FETCH_AND_ADD);
        m.put("IBV_WR_LOCAL_INV", (long) SendWorkRequest.OPCODE_LOCAL_INV);
        m.put("IBV_WR_BIND_MW", (long) SendWorkRequest.OPCODE_BIND_MW);
        m.put("IBV_WR_SEND_WITH_INV", (long) SendWorkRequest.OPCODE_SEND_WITH_INV);
        m.put("IBV_SEND_FENCE", (long) SendWorkRequest.FLAG_FENCE);
        m.put("IBV_SEND_SIGNALED", (long) SendWorkRequest.FLAG_SIGNALED);
        m.put("IBV_SEND_SOLICITED", (long) SendWorkRequest.FLAG_SOLICITED);
        m.put("IBV_SEND_INLINE", (long) SendWorkRequest.FLAG_INLINE);
        // work completions
        m.put("IBV_WC_SUCCESS", (long) WorkCompletion.STATUS_SUCCESS);
        m.put("IBV_WC_LOC_LEN_ERR", (long) WorkCompletion.STATUS_LOC_LEN_ERR);
        m.put("IBV_WC_LOC_QP_OP_ERR", (long) WorkCompletion.STATUS_LOC_QP_OP_ERR);
        m.put("IBV_WC_LOC_PROT_ERR", (long) WorkCompletion.STATUS_LOC_PROT_ERR);
        m.put("IBV_WC_WR_FLUSH_ERR", (long) WorkCompletion.STATUS_WR_FLUSH_ERR);
        m.put("IBV_WC_MW_BIND_ERR", (long) WorkCompletion.STATUS_MW_BIND_ERR);
        m.put("IBV_WC_REM_INV_REQ_ERR", (long) WorkCompletion.STATUS_REM_INV_REQ_ERR);
        m.put("IBV_WC_REM_ACCESS_ERR", (long) WorkCompletion.STATUS_REM_ACCESS_ERR);
        m.put("IBV_WC_REM_OP_ERR", (long) WorkCompletion.STATUS_REM_OP_ERR);
        m.put("IBV_WC_RETRY_EXC_ERR", (long) WorkCompletion.STATUS_RETRY_EXC_ERR);
        m.put("IBV_WC_RNR_RETRY_EXC_ERR", (long) WorkCompletion.STATUS_RNR_RETRY_EXC_ERR);
        m.put("IBV_WC_FATAL_ERR", (long) WorkCompletion.STATUS_FATAL_ERR);
        m.put("IBV_WC_GENERAL_ERR", (long) WorkCompletion.STATUS_GENERAL_ERR);
        m.put("IBV_WC_TM_RNDV_INCOMPLETE", 23L); // last entry of the status-name table
        m.put("IBV_WC_SEND", (long) WorkCompletion.OPCODE_SEND);
        m.put("IBV_WC_RDMA_WRITE", (long) WorkCompletion.OPCODE_RDMA_WRITE);
        m.put("IBV_WC_RDMA_READ", (long) WorkCompletion.OPCODE_RDMA_READ);
        m.put("IBV_WC_COMP_SWAP", (long) WorkCompletion.OPCODE_COMP_SWAP);
        m.put("IBV_WC_FETCH_ADD", (long) WorkCompletion.OPCODE_FETCH_ADD);
        m.put("IBV_WC_BIND_MW", (long) WorkCompletion.OPCODE_BIND_MW);
        m.put("IBV_WC_LOCAL_INV", (long) WorkCompletion.OPCODE_LOCAL_INV);
        m.put("IBV_WC_RECV", (long) WorkCompletion.OPCODE_RECV);
        m.put("IBV_WC_RECV_RDMA_WITH_IMM", (long) WorkCompletion.OPCODE_RECV_RDMA_WITH_IMM);
        m.put("IBV_WC_GRH", (long) WorkCompletion.FLAG_GRH);
        m.put("IBV_WC_WITH_IMM", (long) WorkCompletion.FLAG_WITH_IMM);
        m.put("IBV_WC_WITH_INV", (long) WorkCompletion.FLAG_WITH_INV);
        // memory windows, async events
        m.put("IBV_MW_TYPE_1", (long) MemoryWindow.TYPE_1);
        m.put("IBV_MW_TYPE_2", (long) MemoryWindow.TYPE_2);
        m.put("IBV_EVENT_CQ_ERR", (long) AsyncEvent.CQ_ERR);
        m.put("IBV_EVENT_QP_FATAL", (long) AsyncEvent.QP_FATAL);
        m.put("IBV_EVENT_QP_REQ_ERR", (long) AsyncEvent.QP_REQ_ERR);
        m.put("IBV_EVENT_QP_ACCESS_ERR", (long) AsyncEvent.QP_ACCESS_ERR);
        m.put("IBV_EVENT_COMM_EST", (long) AsyncEvent.COMM_EST);
        m.put("IBV_EVENT_SQ_DRAINED", (long) AsyncEvent.SQ_DRAINED);
        m.put("IBV_EVENT_DEVICE_FATAL", (long) AsyncEvent.DEVICE_FATAL);
        m.put("IBV_EVENT_PORT_ACTIVE", (long) AsyncEvent.PORT_ACTIVE);
        m.put("IBV_EVENT_PORT_ERR", (long) AsyncEvent.PORT_ERR);
        m.put("IBV_EVENT_LID_CHANGE", (long) AsyncEvent.LID_CHANGE);
        m.put("IBV_EVENT_PKEY_CHANGE", (long) AsyncEvent.PKEY_CHANGE);
        m.put("IBV_EVENT_SM_CHANGE", (long) AsyncEvent.SM_CHANGE);
        m.put("IBV_EVENT_SRQ_ERR", (long) AsyncEvent.SRQ_ERR);
        m.put("IBV_EVENT_SRQ_LIMIT_REACHED", (long) AsyncEvent.SRQ_LIMIT_REACHED);
        m.put("IBV_EVENT_QP_LAST_WQE_REACHED", (long) AsyncEvent.QP_LAST_WQE_REACHED);
        m.put("IBV_EVENT_CLIENT_REREGISTER", (long) AsyncEvent.CLIENT_REREGISTER);
        m.put("IBV_EVENT_GID_CHANGE", (long) AsyncEvent.GID_CHANGE);
        m.put("IBV_EVENT_WQ_FATAL", (long) AsyncEvent.WQ_FATAL);
        return m;
    }
}
