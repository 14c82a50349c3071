package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A hostile peer that READs an attachment's memory with a key outside what was granted: the rkey of a grant already
 * FINished (a memory window invalidated after its FIN, or the per-grant region deregistered where there are no
 * windows), or the key of the registration the sender's cache keeps over the attachment's pages (local access and
 * window binding only, no remote access).
 * The server's end of the connection plays the peer: it posts the READ on its own queue pair, as a peer replaying an
 * old RTS would. The READ must fail with a remote access error at the hostile end, that connection must close at
 * both ends, another connection must carry on, and slabs, regions, windows, cached registrations and queue pairs must
 * return to baseline.
 */
@Tag("rdma")
class AttachmentGrantAbuseRdmaTest extends RdmaEndToEndBase {
    private static final int LIMIT = 4 << 20;

    @Override
    @AfterEach // an overriding method is run only when it is annotated itself
    void closeAndCheckBaseline() throws InterruptedException {
        super.closeAndCheckBaseline();
        RdmaTests.await(10_000, () -> RdmaMetrics.ATTACHMENT_REGIONS.get() == 0,
                () -> "attachment registrations deregistered with their connections, not " + RdmaMetrics.ATTACHMENT_REGIONS.get());
    }

    @Test
    void aReadWithAFinishedGrantsRkeyFailsAndClosesOnlyThatConnection() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            byte[] bytes = Bytes.pattern(1 << 20, 7);
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            abuse(attachment, bytes, honest -> {
                long[] grant = honest.send.grants().lastForeignGrant();
                assertNotNull(grant, "the attachment was offered from the application's memory");
                return new long[]{grant[0], grant[2]};
            });
        }
    }

    @Test
    void aReadThroughTheCachedRegistrationsOwnKeyFailsAndClosesOnlyThatConnection() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            byte[] bytes = Bytes.pattern(1 << 20, 9);
            MemorySegment attachment = arena.allocate(bytes.length, 4096);
            MemorySegment.copy(bytes, 0, attachment, ValueLayout.JAVA_BYTE, 0, bytes.length);
            abuse(attachment, bytes, honest -> {
                List<RegistrationCache.Entry<MemoryRegion>> cached = honest.send.grants().registrations().cached();
                if (cached.isEmpty()) {
                    // without memory windows every grant is a region of its own, and nothing is cached
                    assertFalse(honest.context.useWindows(), "windows keep the attachment's registration cached");
                    long[] grant = honest.send.grants().lastForeignGrant();
                    return new long[]{grant[0], grant[2]};
                }
                MemoryRegion mr = cached.getFirst().registration();
                return new long[]{mr.address(), mr.rkey() & 0xffffffffL};
            });
        }
    }

    /**
     * Sends {@code attachment} on a fresh connection and echoes it back; then the server's end of that connection
     * READs 4 KiB at the address and under the rkey {@code target} picks from the client's (honest) end.
     */
    private void abuse(MemorySegment attachment, byte[] expected, Function<RdmaEndpoint, long[]> target) throws Exception {
        startServer(b -> b.addService(AttachmentsRdmaTest.attachEcho()).maxInboundAttachmentSize(LIMIT));
        RpcChannel good = channel();
        byte[] req = Bytes.pattern(200_000, 3);
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)));
        assertRdma(good);
        Set<RdmaEndpoint> known = new HashSet<>(RdmaTests.context().endpoints());
        RpcChannel victim = channel(b -> b.maxInboundAttachmentSize(LIMIT));
        AttachmentsRdmaTest.Collect call = new AttachmentsRdmaTest.Collect();
        ClientCalls.asyncUnaryCall(AttachmentCalls.client(victim.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                WithAttachment.of(new byte[]{1}, attachment, null), call);
        assertNull(call.await());
        assertArrayEquals(expected, call.attachments.getFirst());
        assertRdma(victim);
        List<RdmaEndpoint> all = RdmaTests.context().endpoints();
        RdmaEndpoint honest = Endpoints.newClientEnd(all, known, server.getPort());
        RdmaEndpoint hostile = Endpoints.serverEndOf(honest, all);
        long[] where = target.apply(honest);
        assertEquals(2, server.connectionCount());
        RdmaMetrics.Snapshot before = RdmaMetrics.snapshot();
        try (RdmaTests.LogCapture logs = new RdmaTests.LogCapture()) {
            log("hostile READ of 4096 B at 0x" + Long.toHexString(where[0]) + " rkey 0x" + Long.toHexString(where[1]));
            hostile.send.postUnsolicitedRead(where[0], (int) where[1], SlabPool.shared().allocate(4096), 4096);
            RdmaTests.await(20_000, () -> !hostile.isOpen() && !honest.isOpen(),
                    () -> "both ends of the abused connection closed: hostile " + hostile.isOpen() + ", honest " + honest.isOpen());
            RdmaTests.await(10_000, () -> logs.contains("IBV_WC_REM_ACCESS_ERR"),
                    () -> "the hostile end's READ failed with a remote access error: " + logs.messages());
            log("abused connection closed: " + logs.messages().stream().filter(m -> m.contains("IBV_WC_REM_ACCESS_ERR"))
                    .findFirst().orElse("?") + "; " + RdmaMetrics.snapshot().minus(before));
        }
        RdmaTests.await(20_000, () -> server.connectionCount() == 1,
                () -> "the server dropped the abused connection: " + server.connectionCount() + " connections");
        assertEquals(-1, Bytes.mismatch(req, echo(good, req, 30_000)), "the other connection carries on");
        assertRdma(good);
        RdmaTests.await(20_000, () -> RdmaMetrics.snapshot().connections() == 2,
                () -> "both ends of the abused RDMA connection are torn down: " + RdmaMetrics.snapshot().connections());
    }
}
