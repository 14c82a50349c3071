package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.core.buffer.SlabBuffer;
import dev.rdmarpc.core.buffer.SlabPool;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * RLIMIT_MEMLOCK on a real device, as an unprivileged process (tag {@code rdma-unprivileged}: scripts/rdma-vm-test.sh
 * runs it as nobody with no capabilities; as root CAP_IPC_LOCK lifts the limit and the test is skipped). With the soft
 * limit lowered to what is already pinned plus less than one attachment frame, sending a 1 MiB attachment fails that
 * call with RESOURCE_EXHAUSTED naming RLIMIT_MEMLOCK; calls on the same connection go on, and once the limit is back
 * the attachment travels; everything returns to baseline.
 */
@Tag("rdma")
@Tag("rdma-unprivileged")
class LockedMemoryLimitRdmaTest extends RdmaEndToEndBase {
    private static final int LIMIT = 4 << 20;

    /**
     * Leaves a wholly free slab in every shared size class (64 B to 1 MiB), so that no call below needs a new slab, whose
     * registration the lowered limit would refuse too (a slab no device can use breaks whatever lands in it).
     */
    private static void spareSlabs() {
        for (int size = 64; size <= 1 << 20; size <<= 1) {
            SlabBuffer[] blocks = new SlabBuffer[(4 << 20) / size + 1];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = SlabPool.shared().allocate(size);
            }
            for (SlabBuffer b : blocks) {
                b.release();
            }
        }
    }

    @Test
    void anAttachmentOverTheLockedMemoryLimitFailsWithResourceExhaustedAndTheConnectionCarriesOn() throws Throwable {
        assumeFalse(LockedMemory.ignoresTheLimit(), "this process has CAP_IPC_LOCK, so RLIMIT_MEMLOCK does not apply: "
                + "scripts/rdma-vm-test.sh runs this class as an unprivileged user");
        RdmaDeviceContext context = RdmaTests.context();
        assumeFalse(context.attachmentsOnDemand(), "attachments are registered on demand (ODP): nothing is pinned");
        startServer(b -> b.addService(AttachmentsRdmaTest.attachEcho()).maxInboundAttachmentSize(LIMIT));
        RpcChannel channel = channel(b -> b.maxInboundAttachmentSize(LIMIT));
        byte[] req = Bytes.pattern(200_000, 5); // rendezvous from a slab: slabs are registered already, nothing new pins
        for (int i = 0; i < 3; i++) {
            assertEquals(-1, Bytes.mismatch(req, echo(channel, req, 30_000)));
        }
        assertRdma(channel);
        byte[] bytes = Bytes.pattern(1 << 20, 6);
        // one attachment call on another connection first, so the slabs its receive and reply take exist (registered)
        // before the limit drops
        RpcChannel warmUp = channel(b -> b.maxInboundAttachmentSize(LIMIT));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            AttachmentsRdmaTest.Collect call = new AttachmentsRdmaTest.Collect();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(warmUp.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, attachment, null), call);
            assertNull(call.await());
            assertArrayEquals(bytes, call.attachments.getFirst());
        }
        assertEquals(2, server.connectionCount());
        spareSlabs();
        // the warm-up's registration (its arena is closed) leaves the device's cache now, before the pinned bytes are
        // counted: nothing is left that the refused registration could evict to make room
        context.attachmentRegistrations().sweep();
        long[] limits = LockedMemory.limits();
        long pinned = LockedMemory.pinnedBytes();
        long lowered = pinned + (256 << 10); // room for a quarter of the attachment's 1 MiB frame
        log("RLIMIT_MEMLOCK soft " + limits[0] + " hard " + limits[1] + ", pinned " + pinned + " B; lowering the soft limit to "
                + lowered);
        AtomicInteger released = new AtomicInteger();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            LockedMemory.setSoftLimit(lowered);
            try {
                AttachmentsRdmaTest.Collect refused = new AttachmentsRdmaTest.Collect();
                ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                        WithAttachment.of(new byte[]{1}, attachment, released::incrementAndGet), refused);
                Throwable t = refused.await();
                assertNotNull(t, "the call over the limit failed");
                Status s = t instanceof StatusException se ? se.getStatus() : Status.fromThrowable(t);
                log("attachment over the limit: " + s);
                assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
                assertTrue(s.getDescription() != null && s.getDescription().contains("RLIMIT_MEMLOCK"), s::toString);
                assertEquals(-1, Bytes.mismatch(req, echo(channel, req, 30_000)), "the connection carries on");
                assertRdma(channel);
                assertEquals(2, server.connectionCount(), "on the same connection");
            } finally {
                LockedMemory.setSoftLimit(limits[0]);
            }
            RdmaTests.await(10_000, () -> released.get() == 1, () -> "the refused attachment was released, "
                    + released.get() + " times");
            AttachmentsRdmaTest.Collect ok = new AttachmentsRdmaTest.Collect();
            ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                    WithAttachment.of(new byte[]{1}, attachment, released::incrementAndGet), ok);
            assertNull(ok.await(), "with the limit back the attachment travels");
            assertArrayEquals(bytes, ok.attachments.getFirst());
            assertEquals(2, server.connectionCount(), "still the same connections");
        }
    }
}
