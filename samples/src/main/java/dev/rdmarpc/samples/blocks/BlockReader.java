package dev.rdmarpc.samples.blocks;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The block client's calls: reads and writes whose block bytes travel as attachments. */
final class BlockReader {
    private final BlockStoreRpc.BlockStoreStub stub;
    private final int blockSize;
    private final long deadlineMs;

    BlockReader(BlockStoreRpc.BlockStoreStub stub, int blockSize, long deadlineMs) {
        this.stub = stub;
        this.blockSize = blockSize;
        this.deadlineMs = deadlineMs;
    }

    /** Blocks received: a read-only view of the transport's buffer until released. */
    record Received(BlockRange range, Attachment data) {
        /** Whether the bytes equal {@code expected}; releases the view. */
        boolean matchesAndRelease(MemorySegment expected) {
            try {
                return data.segment().mismatch(expected) == -1;
            } finally {
                data.release();
            }
        }

        /** A copy of the bytes in {@code arena}; releases the view. */
        MemorySegment copyAndRelease(Arena arena) {
            try {
                return data.copyTo(arena);
            } finally {
                data.release();
            }
        }

        /** Gives the view back. */
        void release() {
            data.release();
        }
    }

    private BlockStoreRpc.BlockStoreStub stub() {
        return stub.withDeadlineAfter(deadlineMs, TimeUnit.MILLISECONDS);
    }

    private static BlockRange range(long first, int count) {
        return BlockRange.newBuilder().setFirst(first).setCount(count).build();
    }

    /** Reads {@code count} blocks from {@code first}; the caller releases what it gets. */
    Received read(long first, int count) throws Exception {
        CompletableFuture<WithAttachment<BlockRange>> answer = new CompletableFuture<>();
        stub().readWithAttachment(WithAttachment.of(range(first, count)), BlockClient.into(answer));
        return checked(BlockClient.await(answer, deadlineMs), first, count);
    }

    /** The answer as blocks, if it carries {@code count} blocks from {@code first}; otherwise released and refused. */
    private Received checked(WithAttachment<BlockRange> got, long first, int count) {
        long size = got.attachment() == null ? -1 : got.attachment().size();
        if (got.message().getFirst() != first || got.message().getCount() != count || size != (long) count * blockSize) {
            got.release();
            throw new IllegalStateException("check failed: asked for " + count + " blocks from " + first + ", got "
                    + got.message().getCount() + " from " + got.message().getFirst() + " in " + size + " bytes");
        }
        return new Received(got.message(), got.attachment());
    }

    /**
     * Writes {@code data} (whole blocks, this client's memory, sent without a copy) at block {@code first}; returns once
     * the server answered and the call let go of {@code data}.
     */
    void write(long first, int count, MemorySegment data) throws Exception {
        CompletableFuture<Void> letGo = new CompletableFuture<>();
        CompletableFuture<WithAttachment<WriteResponse>> answer = new CompletableFuture<>();
        stub().writeWithAttachment(WithAttachment.of(range(first, count), data, () -> letGo.complete(null)),
                BlockClient.into(answer));
        try {
            int written = BlockClient.await(answer, deadlineMs).message().getBlocksWritten();
            BlockClient.check(written == count, count + " blocks written, not " + written);
        } finally {
            // the memory may be reused only once the call no longer references it, whatever the answer
            letGo.get(deadlineMs + 60_000, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Reads blocks 0 to {@code blockCount} by reads of {@code perRead} blocks, {@code window} in flight, comparing each
     * with {@code reference}; returns the bytes read.
     */
    long readAll(long blockCount, int perRead, int window, Reference reference) throws Exception {
        Semaphore room = new Semaphore(window);
        CompletableFuture<Void> failed = new CompletableFuture<>();
        AtomicLong bytes = new AtomicLong();
        for (long first = 0; first < blockCount && !failed.isDone(); first += perRead) {
            long from = first;
            int count = (int) Math.min(perRead, blockCount - first);
            room.acquire();
            stub().readWithAttachment(WithAttachment.of(range(from, count)), new StreamObserver<>() {
                @Override
                public void onNext(WithAttachment<BlockRange> value) {
                    try {
                        Received got = checked(value, from, count);
                        try {
                            BlockClient.check(reference.matches(from * blockSize, got.data().segment()),
                                    count + " blocks from " + from + " match the reference");
                            bytes.addAndGet(got.data().size());
                        } finally {
                            got.release();
                        }
                    } catch (RuntimeException e) {
                        failed.completeExceptionally(e);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    failed.completeExceptionally(t);
                    room.release();
                }

                @Override
                public void onCompleted() {
                    room.release();
                }
            });
        }
        boolean all = room.tryAcquire(window, deadlineMs + 60_000, TimeUnit.MILLISECONDS);
        if (failed.isDone()) {
            BlockClient.await(failed, deadlineMs);
        }
        BlockClient.check(all, "every read answered");
        return bytes.get();
    }

    /** Reads blocks 0 to {@code blockCount} as one stream, comparing each answer with {@code reference}. */
    long readStream(long blockCount, Reference reference) throws Exception {
        BlockRange whole = range(0, (int) blockCount);
        CompletableFuture<Long> done = new CompletableFuture<>();
        stub().readStreamWithAttachment(WithAttachment.of(ReadStreamRequest.newBuilder().setRange(whole).build()),
                new StreamObserver<>() {
                    private long next;

                    @Override
                    public void onNext(WithAttachment<BlockRange> value) {
                        try {
                            int count = value.message().getCount();
                            Received got = checked(value, next, count);
                            try {
                                BlockClient.check(reference.matches(next * blockSize, got.data().segment()),
                                        count + " streamed blocks from " + next + " match the reference");
                            } finally {
                                got.release();
                            }
                            next += count;
                        } catch (RuntimeException e) {
                            done.completeExceptionally(e);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(BlockClient.asStatusException(t));
                    }

                    @Override
                    public void onCompleted() {
                        if (next == blockCount) {
                            done.complete(next * blockSize);
                        } else {
                            done.completeExceptionally(new IllegalStateException("check failed: the stream ended after "
                                    + next + " of " + blockCount + " blocks"));
                        }
                    }
                });
        return BlockClient.await(done, deadlineMs);
    }
}
