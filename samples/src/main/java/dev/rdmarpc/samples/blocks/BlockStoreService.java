package dev.rdmarpc.samples.blocks;

import dev.rdmarpc.core.Attachment;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.core.WithAttachment;

/**
 * The block store: reads answer with a slice of the file's mapping as the attachment (sent from it with no copy, over
 * RDMA read by the client's NIC), writes copy the request's attachment into the mapping. A read that overlaps a write
 * in progress may see some of either's bytes, as with a disk.
 */
public final class BlockStoreService extends BlockStoreRpc.BlockStoreImplBase {
    private final BlockFile file;
    private final int maxBlocksPerCall;

    /** Serves {@code file}; one call moves at most {@code maxBytesPerCall} bytes (at least one block). */
    public BlockStoreService(BlockFile file, int maxBytesPerCall) {
        this.file = file;
        this.maxBlocksPerCall = Math.max(1, maxBytesPerCall / file.blockSize());
    }

    @Override
    public void describe(DescribeRequest request, StreamObserver<DescribeResponse> responseObserver) {
        responseObserver.onNext(DescribeResponse.newBuilder().setBlockSize(file.blockSize())
                .setBlockCount(file.blockCount()).setMaxBlocksPerCall(maxBlocksPerCall).build());
        responseObserver.onCompleted();
    }

    @Override
    public void readWithAttachment(WithAttachment<BlockRange> request, StreamObserver<WithAttachment<BlockRange>> responseObserver) {
        request.release();
        BlockRange range = request.message();
        Status bad = check(range);
        if (bad != null) {
            responseObserver.onError(bad.asException());
            return;
        }
        responseObserver.onNext(WithAttachment.of(range, file.blocks(range.getFirst(), range.getCount()), null));
        responseObserver.onCompleted();
    }

    @Override
    public void writeWithAttachment(WithAttachment<BlockRange> request, StreamObserver<WithAttachment<WriteResponse>> responseObserver) {
        BlockRange range = request.message();
        Attachment data = request.attachment();
        try {
            Status bad = check(range);
            long expected = (long) range.getCount() * file.blockSize();
            if (bad == null && (data == null || data.size() != expected)) {
                bad = Status.INVALID_ARGUMENT.withDescription("a write of " + range.getCount() + " blocks carries "
                        + expected + " bytes as its attachment, not " + (data == null ? "none" : data.size()));
            }
            if (bad != null) {
                responseObserver.onError(bad.asException());
                return;
            }
            file.blocks(range.getFirst(), range.getCount()).copyFrom(data.segment());
        } finally {
            request.release();
        }
        responseObserver.onNext(WithAttachment.of(WriteResponse.newBuilder().setBlocksWritten(range.getCount()).build()));
        responseObserver.onCompleted();
    }

    @Override
    public void readStreamWithAttachment(WithAttachment<ReadStreamRequest> request,
                                         StreamObserver<WithAttachment<BlockRange>> responseObserver) {
        request.release();
        BlockRange range = request.message().getRange();
        int perMessage = request.message().getBlocksPerMessage();
        Status bad = check(range.getFirst(), range.getCount(), Integer.MAX_VALUE);
        if (bad == null && (perMessage < 0 || perMessage > maxBlocksPerCall)) {
            bad = Status.INVALID_ARGUMENT.withDescription("blocks_per_message must be 0 to " + maxBlocksPerCall
                    + ", not " + perMessage);
        }
        if (bad != null) {
            responseObserver.onError(bad.asException());
            return;
        }
        new RangeSender((ServerCallStreamObserver<WithAttachment<BlockRange>>) responseObserver, range.getFirst(),
                range.getFirst() + range.getCount(), perMessage == 0 ? maxBlocksPerCall : perMessage).start();
    }

    /** Null if one call may move {@code range}, else the status that says why not. */
    private Status check(BlockRange range) {
        return check(range.getFirst(), range.getCount(), maxBlocksPerCall);
    }

    private Status check(long first, int count, int most) {
        if (count <= 0 || count > most) {
            return Status.INVALID_ARGUMENT.withDescription("count must be 1 to " + most + " blocks, not " + count);
        }
        if (!file.contains(first, count)) {
            return Status.OUT_OF_RANGE.withDescription(count + " blocks from block " + first + " are not inside the "
                    + file.blockCount() + " blocks of the store");
        }
        return null;
    }

    /** Sends a range as runs of blocks while the call is ready for more, and goes on when it is ready again. */
    private final class RangeSender implements Runnable {
        private final ServerCallStreamObserver<WithAttachment<BlockRange>> call;
        private final long end;
        private final int perMessage;
        private long next;
        private boolean done;

        RangeSender(ServerCallStreamObserver<WithAttachment<BlockRange>> call, long first, long end, int perMessage) {
            this.call = call;
            this.next = first;
            this.end = end;
            this.perMessage = perMessage;
        }

        void start() {
            call.setOnReadyHandler(this);
            run();
        }

        @Override
        public synchronized void run() {
            while (!done) {
                if (call.isCancelled()) {
                    done = true;
                    return;
                }
                if (next == end) {
                    done = true;
                    call.onCompleted();
                    return;
                }
                if (!call.isReady()) {
                    return; // the call runs this again once it is ready
                }
                int count = (int) Math.min(perMessage, end - next);
                BlockRange run = BlockRange.newBuilder().setFirst(next).setCount(count).build();
                call.onNext(WithAttachment.of(run, file.blocks(next, count), null));
                next += count;
            }
        }
    }
}
