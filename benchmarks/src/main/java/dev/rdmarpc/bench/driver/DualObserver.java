package dev.rdmarpc.bench.driver;

/**
 * A stream observer that both generated APIs accept: rdmarpc's and grpc-java's {@code StreamObserver}
 * have the same three methods, so one object serves either without a wrapper.
 */
interface DualObserver<V> extends dev.rdmarpc.core.StreamObserver<V>, io.grpc.stub.StreamObserver<V> {
}
