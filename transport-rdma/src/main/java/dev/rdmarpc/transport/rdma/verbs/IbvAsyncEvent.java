package dev.rdmarpc.transport.rdma.verbs;

import static dev.rdmarpc.transport.rdma.verbs.CLayouts.*;

import java.lang.foreign.StructLayout;

/** Layout of {@code struct ibv_async_event}. */
final class IbvAsyncEvent {
    static final StructLayout LAYOUT = struct("ibv_async_event",
            union("element",
                    ptr("cq"),
                    ptr("qp"),
                    ptr("srq"),
                    ptr("wq"),
                    s32("port_num")),
            s32("event_type"));

    static final long SIZE = LAYOUT.byteSize();
    static final long ELEMENT = offset(LAYOUT, "element");
    static final long PORT_NUM = offset(LAYOUT, "element.port_num");
    static final long EVENT_TYPE = offset(LAYOUT, "event_type");

    private IbvAsyncEvent() {
    }
}
