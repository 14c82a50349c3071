package dev.rdmarpc.samples.blocks;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.buffer.SlabPool;
import dev.rdmarpc.core.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The block store sample over a real server and channel on loopback, its file mapped from a temporary directory. */
class BlockStoreServiceTest {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 1024;
    private static final int MAX_CALL = 1 << 20;

    @TempDir
    Path dir;
    private Path file;
    private BlockFile store;
    private RpcServer server;
    private RpcChannel channel;
    private BlockReader reader;
    private long baseline;

    @BeforeEach
    void start() throws Exception {
        baseline = SlabPool.shared().inUseBuffers();
        file = dir.resolve("store.bin");
        store = BlockFile.open(file, BLOCK, BLOCKS);
        server = RpcServer.forPort(0).addService(new BlockStoreService(store, MAX_CALL).bindService()
                .withAttachments(BlockStoreRpc.getWriteMethod(), MAX_CALL)).build().start();
        channel = RpcChannel.forAddress("127.0.0.1", server.getPort()).build();
        reader = new BlockReader(BlockStoreRpc.newStub(channel), BLOCK, 60_000);
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(60, TimeUnit.SECONDS);
        store.close();
        Await.until(() -> SlabPool.shared().inUseBuffers() == baseline, () -> "slab buffers in use back to " + baseline
                + ", not " + SlabPool.shared().inUseBuffers() + ":\n" + SlabPool.shared().describeLiveBuffers());
    }

    private String target() {
        return "127.0.0.1:" + server.getPort();
    }

    @Test
    void theClientReadsEveryBlockWritesAndRestoresAgainstTheFileAndAgainstThePattern() {
        assertEquals(0, new CommandLine(new BlockClient()).execute("-t", target(), "--transport", "TCP",
                "--verify-file", file.toString(), "--read-kib", "64", "--in-flight", "4"));
        assertEquals(0, new CommandLine(new BlockClient()).execute("-t", target(), "--transport", "TCP",
                "--read-kib", "1024", "--in-flight", "1"));
    }

    @Test
    void aNewStoreHoldsThePatternAndAWriteReachesTheFile() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Reference pattern = new Reference.Pattern(BLOCK);
            assertTrue(reader.read(10, 3).matchesAndRelease(pattern.expected(10L * BLOCK, 3L * BLOCK, arena)));
            MemorySegment data = arena.allocate(2L * BLOCK, 4096);
            for (long i = 0; i < data.byteSize(); i++) {
                data.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            reader.write(500, 2, data);
            store.force();
            byte[] onDisk = Files.readAllBytes(file);
            assertArrayEquals(data.toArray(ValueLayout.JAVA_BYTE), Arrays.copyOfRange(onDisk, 500 * BLOCK, 502 * BLOCK));
            assertTrue(reader.read(499, 1).matchesAndRelease(pattern.expected(499L * BLOCK, BLOCK, arena)), "block before untouched");
            assertTrue(reader.read(502, 1).matchesAndRelease(pattern.expected(502L * BLOCK, BLOCK, arena)), "block after untouched");
        }
    }

    @Test
    void aStreamOfOneBlockPerAnswerArrivesWholeAndInOrder() throws Exception {
        BlockStoreRpc.BlockStoreBlockingStub blocking = BlockStoreRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        // the plain stub: the answers' attachments are released unread, and the ranges still come in order
        Iterator<BlockRange> it = blocking.readStream(ReadStreamRequest.newBuilder()
                .setRange(BlockRange.newBuilder().setFirst(100).setCount(300)).setBlocksPerMessage(1).build());
        long next = 100;
        while (it.hasNext()) {
            BlockRange r = it.next();
            assertEquals(next, r.getFirst());
            assertEquals(1, r.getCount());
            next++;
        }
        assertEquals(400, next);
        assertEquals((long) BLOCKS * BLOCK, reader.readStream(BLOCKS, new Reference.Pattern(BLOCK)));
    }

    @Test
    void badRequestsAreRefusedWithTheirCodesAndTheConnectionCarriesOn() throws Exception {
        BlockStoreRpc.BlockStoreBlockingStub blocking = BlockStoreRpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        int maxBlocks = MAX_CALL / BLOCK;
        assertEquals(maxBlocks, blocking.describe(DescribeRequest.getDefaultInstance()).getMaxBlocksPerCall());
        assertCode(Status.Code.OUT_OF_RANGE, () -> reader.read(BLOCKS - 1, 2).release());
        assertCode(Status.Code.OUT_OF_RANGE, () -> reader.read(-1, 1).release());
        assertCode(Status.Code.INVALID_ARGUMENT, () -> reader.read(0, 0).release());
        assertCode(Status.Code.INVALID_ARGUMENT, () -> reader.read(0, maxBlocks + 1).release());
        // a write whose attachment is not its blocks' size, or that has none (the plain stub sends none)
        try (Arena arena = Arena.ofShared()) {
            assertCode(Status.Code.INVALID_ARGUMENT, () -> reader.write(0, 2, arena.allocate(BLOCK)));
            assertCode(Status.Code.INVALID_ARGUMENT, () -> blocking.write(BlockRange.newBuilder().setFirst(0).setCount(1).build()));
            // over the server's attachment limit: refused before any of it is sent
            assertCode(Status.Code.RESOURCE_EXHAUSTED, () -> reader.write(0, maxBlocks + 1, arena.allocate(MAX_CALL + BLOCK)));
        }
        assertCode(Status.Code.INVALID_ARGUMENT, () -> blocking.readStream(ReadStreamRequest.newBuilder()
                .setRange(BlockRange.newBuilder().setCount(1)).setBlocksPerMessage(maxBlocks + 1).build()).next());
        assertCode(Status.Code.OUT_OF_RANGE, () -> blocking.readStream(ReadStreamRequest.newBuilder()
                .setRange(BlockRange.newBuilder().setFirst(BLOCKS).setCount(1)).build()).next());
        try (Arena arena = Arena.ofShared()) {
            assertTrue(reader.read(0, 1).matchesAndRelease(new Reference.Pattern(BLOCK).expected(0, BLOCK, arena)),
                    "the connection still serves");
        }
    }

    @Test
    void aFileThatIsNotWholeBlocksOrABadBlockSizeIsRefusedAndAnExistingFileKeepsItsBytes() throws Exception {
        Path odd = dir.resolve("odd.bin");
        Files.write(odd, new byte[BLOCK + 1]);
        assertThrows(IllegalArgumentException.class, () -> BlockFile.open(odd, BLOCK, 1));
        assertThrows(IllegalArgumentException.class, () -> BlockFile.open(dir.resolve("x.bin"), 3000, 1));
        Path kept = dir.resolve("kept.bin");
        byte[] bytes = new byte[2 * BLOCK];
        Arrays.fill(bytes, (byte) 5);
        Files.write(kept, bytes);
        try (BlockFile reopened = BlockFile.open(kept, BLOCK, 99)) {
            assertEquals(2, reopened.blockCount());
            assertArrayEquals(bytes, reopened.blocks(0, 2).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /** A call that must fail. */
    private interface Call {
        void run() throws Exception;
    }

    private static void assertCode(Status.Code code, Call call) {
        StatusException e = assertThrows(StatusException.class, call::run);
        assertEquals(code, e.getStatus().getCode(), e.getStatus()::toString);
    }
}
