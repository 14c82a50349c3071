package dev.rdmarpc.bench.driver;

/** A connected benchmark client of one transport. */
public interface BenchClient extends AutoCloseable {

    /** The transport really in use: "tcp" or "rdma" for native, "h2" for grpc-netty, "raw" for netty-raw. */
    String negotiated();

    /** A new lane; lane {@code index} uses connection {@code index % connections}. */
    Lane newLane(int index, Workload workload, LaneListener listener);

    /** Closes every connection; waits a few seconds at most. */
    @Override
    void close();
}
