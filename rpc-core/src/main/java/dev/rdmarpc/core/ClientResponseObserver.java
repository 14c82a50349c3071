package dev.rdmarpc.core;

/** A response observer that is handed the request stream before the call starts (to cancel or tune flow control). */
public interface ClientResponseObserver<ReqT, RespT> extends StreamObserver<RespT> {
    void beforeStart(ClientCallStreamObserver<ReqT> requestStream);
}
