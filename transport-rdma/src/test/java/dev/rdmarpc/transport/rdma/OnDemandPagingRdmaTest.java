package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.OdpCapabilities;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On-demand paging on a real device: prints what {@code ibv_query_device_ex} reports, checks the context decided as
 * {@link RegistrationCache#useOnDemandPaging} does, and sends an attachment whose registration carries ON_DEMAND
 * exactly when that decision says so (pinned otherwise).
 */
@Tag("rdma")
class OnDemandPagingRdmaTest extends RdmaEndToEndBase {
    @Test
    void attachmentMemoryIsRegisteredAsTheDeviceReports() throws Exception {
        RdmaDeviceContext context = RdmaTests.context();
        OdpCapabilities odp = context.odpCapabilities();
        log(context.deviceName() + " reports on-demand paging: " + odp + "; attachments "
                + (context.attachmentsOnDemand() ? "registered on demand" : "pinned"));
        assertEquals(RegistrationCache.useOnDemandPaging(System.getProperty(RegistrationCache.ON_DEMAND_PAGING_PROPERTY), odp),
                context.attachmentsOnDemand());

        startServer(b -> b.addService(AttachmentsRdmaTest.attachEcho()).maxInboundAttachmentSize(4 << 20));
        Set<RdmaEndpoint> known = new HashSet<>(context.endpoints());
        RpcChannel channel = channel(b -> b.maxInboundAttachmentSize(4 << 20));
        byte[] bytes = Bytes.pattern(1 << 20, 11);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            AttachmentsRdmaTest.Collect call = new AttachmentsRdmaTest.Collect();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, attachment, null), call);
            assertNull(call.await());
            assertArrayEquals(bytes, call.attachments.getFirst());
            assertRdma(channel);
            RdmaEndpoint client = Endpoints.newClientEnd(context.endpoints(), known, server.getPort());
            int access = client.send.grants().registrations().access();
            assertEquals(context.attachmentsOnDemand(), (access & AccessFlags.ON_DEMAND) != 0,
                    () -> "registration access " + AccessFlags.describe(access));
        }
    }
}
