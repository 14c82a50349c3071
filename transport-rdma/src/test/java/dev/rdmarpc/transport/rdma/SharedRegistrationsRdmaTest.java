package dev.rdmarpc.transport.rdma;

import static dev.rdmarpc.transport.rdma.RdmaTests.log;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.AttachmentCalls;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.WithAttachment;
import dev.rdmarpc.transport.rdma.verbs.AccessFlags;
import dev.rdmarpc.transport.rdma.verbs.MemoryRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attachment registrations are the device's, not a connection's: two connections sending from one mapped file (as
 * the block store sample maps its file) or from one region of native memory register its pages once between them; the public invalidation drops
 * the registration, and the next send registers again. Also prints what a registration and a cache hit cost here
 * (a measurement, not an assertion).
 */
@Tag("rdma")
class SharedRegistrationsRdmaTest extends RdmaEndToEndBase {
    /** Larger than a SEND, within one attachment frame: one grant per send. */
    private static final int LENGTH = 768 << 10;
    private static final int OFFSET = 8192 + 5;

    @TempDir
    Path dir;

    @Test
    void twoConnectionsSendingFromOneMappedFileRegisterItOnce() throws Exception {
        Path file = dir.resolve("shared.bin");
        byte[] content = Bytes.pattern(4 << 20, 11);
        Files.write(file, content);
        byte[] expected = Arrays.copyOfRange(content, OFFSET, OFFSET + LENGTH);
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena arena = Arena.ofShared()) {
            MemorySegment region = fc.map(FileChannel.MapMode.READ_WRITE, 0, content.length, arena).asSlice(OFFSET, LENGTH);
            sendTwiceOnTwoConnectionsRegisteringOnce(region, expected, "mapped file");
        }
    }

    @Test
    void twoConnectionsSendingFromOneNativeRegionRegisterItOnce() throws Exception {
        byte[] bytes = Bytes.pattern(LENGTH, 12);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment region = arena.allocate(LENGTH + OFFSET, 4096).asSlice(OFFSET, LENGTH);
            MemorySegment.copy(bytes, 0, region, ValueLayout.JAVA_BYTE, 0, LENGTH);
            sendTwiceOnTwoConnectionsRegisteringOnce(region, bytes, "native memory");
        }
    }

    /**
     * Sends {@code region} on connection a, b, then a again: one registration, two hits; then invalidates it through
     * the public API (nothing holds it: deregistered at once) and sends again on b, which registers it anew.
     */
    private void sendTwiceOnTwoConnectionsRegisteringOnce(MemorySegment region, byte[] expected, String what) throws Exception {
        startServer(b -> b.addService(AttachmentsRdmaTest.attachEcho()).maxInboundAttachmentSize(AttachmentsRdmaTest.LIMIT));
        RpcChannel a = channel(b -> b.maxInboundAttachmentSize(AttachmentsRdmaTest.LIMIT));
        RpcChannel b = channel(c -> c.maxInboundAttachmentSize(AttachmentsRdmaTest.LIMIT));
        RegistrationCache<MemoryRegion> cache = RdmaTests.context().attachmentRegistrations();
        long registrations = cache.registrations();
        long hits = cache.hits();
        for (RpcChannel ch : new RpcChannel[]{a, b, a}) {
            assertArrayEquals(expected, echo(ch, region), what + " echoed");
            assertRdma(ch);
        }
        assertEquals(2, server.connectionCount(), "two connections");
        long made = cache.registrations() - registrations;
        log(what + " sent 3 times on 2 connections: " + made + " registration(s), " + (cache.hits() - hits) + " cache hit(s)");
        RegistrationCache.Entry<MemoryRegion> entry = entryOver(cache, region);
        log(what + ": cached with access 0x" + Integer.toHexString(entry.access));
        assertEquals(1, cache.registrations() - registrations, "the second connection's sends hit the first one's registration");
        assertTrue(cache.hits() - hits >= 2, "the later sends hit: " + (cache.hits() - hits));

        long live = RdmaMetrics.ATTACHMENT_REGIONS.get();
        assertEquals(0, Attachment.invalidateRegistrations(region), "no send holds it");
        assertEquals(live - 1, RdmaMetrics.ATTACHMENT_REGIONS.get(), "deregistered at once");
        assertTrue(cache.cached().stream().noneMatch(e -> overlaps(e, region)), "nothing cached over it");
        assertArrayEquals(expected, echo(b, region), what + " echoed after the invalidation");
        assertEquals(2, cache.registrations() - registrations, "registered again after the invalidation");
    }

    private static byte[] echo(RpcChannel channel, MemorySegment attachment) throws Exception {
        AttachmentsRdmaTest.Collect call = new AttachmentsRdmaTest.Collect();
        ClientCalls.asyncUnaryCall(AttachmentCalls.client(channel.newCall(AttachmentsRdmaTest.ECHO, CallOptions.DEFAULT)),
                WithAttachment.of(new byte[]{1}, attachment, null), call);
        assertNull(call.await());
        return call.attachments.getFirst();
    }

    private static RegistrationCache.Entry<MemoryRegion> entryOver(RegistrationCache<MemoryRegion> cache, MemorySegment region) {
        var over = cache.cached().stream().filter(e -> overlaps(e, region)).toList();
        assertEquals(1, over.size(), "one cached registration over the region: " + over.size());
        return over.getFirst();
    }

    private static boolean overlaps(RegistrationCache.Entry<?> e, MemorySegment region) {
        return e.start < region.address() + region.byteSize() && e.end > region.address();
    }

    /**
     * Prints the cost of a registration (a miss: invalidated first) and of a cache hit, each with its release, for
     * native memory of 64 KiB, 1 MiB and 16 MiB (window binding access).
     */
    @Test
    void registrationAndCacheHitCost() throws Exception {
        RegistrationCache<MemoryRegion> cache = RdmaTests.context().attachmentRegistrations();
        try (Arena arena = Arena.ofShared()) {
            for (int size : new int[]{64 << 10, 1 << 20, 16 << 20}) {
                MemorySegment m = arena.allocate(size, 4096);
                m.fill((byte) 1); // pages present, as an attachment's are
                measure(cache, m, cache.access() & ~AccessFlags.ON_DEMAND, "native " + (size >> 10) + " KiB");
            }
        }
    }

    private static void measure(RegistrationCache<MemoryRegion> cache, MemorySegment m, int access, String what) {
        int rounds = 20;
        long missNanos = 0;
        long hitNanos = 0;
        for (int i = 0; i < rounds; i++) {
            cache.invalidate(m.address(), m.byteSize());
            long t0 = System.nanoTime();
            cache.release(cache.acquire(m, access));
            long t1 = System.nanoTime();
            cache.release(cache.acquire(m, access));
            long t2 = System.nanoTime();
            missNanos += t1 - t0;
            hitNanos += t2 - t1;
        }
        cache.invalidate(m.address(), m.byteSize());
        log(String.format("registration cost, %s: registration %.1f µs, cache hit %.2f µs (mean of %d)", what,
                missNanos / 1e3 / rounds, hitNanos / 1e3 / rounds, rounds));
    }
}
