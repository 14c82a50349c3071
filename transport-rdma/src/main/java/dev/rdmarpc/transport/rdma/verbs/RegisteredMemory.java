package dev.rdmarpc.transport.rdma.verbs;

/** Memory a scatter/gather entry may name: what the local key of its registration is. */
public interface RegisteredMemory {
    /** The local key for scatter/gather entries. */
    int lkey();
}
