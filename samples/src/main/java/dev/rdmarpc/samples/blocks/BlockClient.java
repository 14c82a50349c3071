package dev.rdmarpc.samples.blocks;

import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StatusException;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.TransportMode;
import dev.rdmarpc.core.WithAttachment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Command-line client that reads a block server's whole store, checks every byte, writes blocks from its own memory and
 * reads them back, and reports what it did.
 */
@Command(name = "block-client", mixinStandardHelpOptions = true, version = "rdmarpc block store sample 0.1",
        description = "Reads every block of an rdmarpc block server (unary reads, several in flight, and one streamed "
                + "read), compares each byte with the server's file (--verify-file) or with the pattern a new store "
                + "starts with, writes blocks from native memory and reads them back, puts the old bytes back, and "
                + "checks that bad requests are refused; prints timings.")
public final class BlockClient implements Callable<Integer> {
    @Option(names = {"-t", "--target"}, defaultValue = "127.0.0.1:50052", description = "Server host:port (default: ${DEFAULT-VALUE}).")
    String target;

    @Option(names = "--transport", defaultValue = "AUTO", description = "AUTO, RDMA or TCP (default: ${DEFAULT-VALUE}).")
    TransportMode transport;

    @Option(names = "--verify-file", description = "The server's file, as this host sees it: reads are compared with it "
            + "(default: with the pattern of a new store).")
    Path verifyFile;

    @Option(names = "--read-kib", defaultValue = "256", description = "KiB per unary read (default: ${DEFAULT-VALUE}).")
    int readKib;

    @Option(names = "--in-flight", defaultValue = "4", description = "Unary reads in flight at once (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--deadline-ms", defaultValue = "30000", description = "Deadline of each call, ms (default: ${DEFAULT-VALUE}).")
    long deadlineMs;

    @Option(names = "--connect-timeout-ms", defaultValue = "20000",
            description = "Time for TCP connect and the HELLO exchange (RDMA upgrade included), ms (default: ${DEFAULT-VALUE}; "
                    + "raise it in an emulated RDMA guest, where opening the device takes tens of seconds).")
    long connectTimeoutMs;

    @Override
    public Integer call() throws Exception {
        try (RpcChannel channel = RpcChannel.forTarget(target).transportMode(transport)
                .connectTimeout(Duration.ofMillis(connectTimeoutMs)).build();
             Arena arena = Arena.ofShared()) {
            BlockStoreRpc.BlockStoreBlockingStub blocking = BlockStoreRpc.newBlockingStub(channel);
            DescribeResponse store = blocking.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS)
                    .describe(DescribeRequest.getDefaultInstance());
            System.out.println("connected over " + channel.currentTransport() + ": " + store.getBlockCount()
                    + " blocks of " + store.getBlockSize() + " B, at most " + store.getMaxBlocksPerCall() + " per call");
            BlockReader reader = new BlockReader(BlockStoreRpc.newStub(channel), store.getBlockSize(), deadlineMs);
            Reference reference = verifyFile == null ? new Reference.Pattern(store.getBlockSize())
                    : Reference.ofFile(verifyFile, store.getBlockSize(), arena);
            int perRead = Math.clamp((long) readKib * 1024 / store.getBlockSize(), 1, store.getMaxBlocksPerCall());

            // 1. every block by unary reads, several in flight, each compared with the reference as it arrives
            long t0 = System.nanoTime();
            long bytes = reader.readAll(store.getBlockCount(), perRead, Math.max(1, inFlight), reference);
            report("unary reads of " + perRead + " blocks, " + inFlight + " in flight", bytes, System.nanoTime() - t0);

            // 2. every block again by one streamed read
            t0 = System.nanoTime();
            bytes = reader.readStream(store.getBlockCount(), reference);
            report("one streamed read", bytes, System.nanoTime() - t0);

            // 3. a write from this client's own native memory, read back; then the old bytes written back
            int count = (int) Math.min(perRead, store.getBlockCount());
            long first = store.getBlockCount() / 2 - count / 2;
            MemorySegment fresh = arena.allocate((long) count * store.getBlockSize(), 4096);
            byte[] random = new byte[(int) fresh.byteSize()];
            new Random(first).nextBytes(random);
            MemorySegment.copy(MemorySegment.ofArray(random), 0, fresh, 0, random.length);
            MemorySegment old = reader.read(first, count).copyAndRelease(arena);
            check(reference.matches(first * store.getBlockSize(), old), "blocks read before the write match the reference");
            reader.write(first, count, fresh);
            check(reader.read(first, count).matchesAndRelease(fresh), "written blocks read back intact");
            if (reference instanceof Reference.OfFile file) {
                check(file.matches(first * store.getBlockSize(), fresh), "the server's file holds the written blocks");
            }
            reader.write(first, count, old);
            check(reader.read(first, count).matchesAndRelease(old), "the old bytes are back");
            System.out.printf(Locale.ROOT, "write of %d blocks from native memory: read back intact, old bytes restored%n", count);

            // 4. bad requests are refused, and the connection carries on
            expect(Status.Code.OUT_OF_RANGE, () -> reader.read(store.getBlockCount() - 1, 2).release());
            expect(Status.Code.INVALID_ARGUMENT, () -> reader.read(0, store.getMaxBlocksPerCall() + 1).release());
            expect(Status.Code.INVALID_ARGUMENT, () -> reader.write(0, 1, fresh.asSlice(0, store.getBlockSize() / 2)));
            check(reader.read(0, 1).matchesAndRelease(reference.expected(0, store.getBlockSize(), arena)),
                    "a read after the refused requests");
            System.out.println("out-of-range read: OUT_OF_RANGE; oversized read and short write: INVALID_ARGUMENT");
            System.out.println("block-client: all checks passed");
            return 0;
        } catch (StatusException e) {
            System.err.println("block-client: call failed: " + e.getStatus());
            return 2;
        }
    }

    private static void report(String what, long bytes, long nanos) {
        System.out.printf(Locale.ROOT, "%s: %d MiB in %.1f ms, %.1f MB/s, every byte checked%n", what, bytes >> 20,
                nanos / 1e6, bytes * 1e3 / nanos);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("check failed: " + what);
        }
    }

    /** A call that must fail with {@code code}. */
    private interface Refused {
        void run() throws Exception;
    }

    private static void expect(Status.Code code, Refused call) throws Exception {
        try {
            call.run();
        } catch (StatusException e) {
            check(e.getStatus().getCode() == code, "refused with " + code + ", not " + e.getStatus());
            return;
        }
        throw new IllegalStateException("check failed: a bad request was not refused with " + code);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BlockClient()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }

    /** A future's result, or its failure as the StatusException it carries. */
    static <T> T await(CompletableFuture<T> future, long deadlineMs) throws Exception {
        try {
            return future.get(deadlineMs + 60_000, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof StatusException se) {
                throw se;
            }
            throw e;
        }
    }

    /** A call's failure as a StatusException, as {@link #await} rethrows it. */
    static StatusException asStatusException(Throwable t) {
        return t instanceof StatusException se ? se : Status.fromThrowable(t).asException();
    }

    /** An observer of one answer that completes {@code future} with it, or with the call's failure. */
    static <T> StreamObserver<T> into(CompletableFuture<T> future) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                if (!future.complete(value) && value instanceof WithAttachment<?> extra) {
                    extra.release();
                }
            }

            @Override
            public void onError(Throwable t) {
                future.completeExceptionally(asStatusException(t));
            }

            @Override
            public void onCompleted() {
                future.completeExceptionally(Status.INTERNAL.withDescription("no answer").asException());
            }
        };
    }
}
