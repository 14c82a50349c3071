package dev.rdmarpc.health;

import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.health.v1.HealthCheckRequest;
import dev.rdmarpc.health.v1.HealthCheckResponse;
import dev.rdmarpc.health.v1.HealthCheckResponse.ServingStatus;
import dev.rdmarpc.health.v1.HealthRpc;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The standard gRPC health service ({@code grpc.health.v1.Health}) for a native server: {@code Check} answers a
 * service's status (NOT_FOUND for one never set), {@code Watch} streams it now and on every change. The application
 * sets each service's status; the server as a whole (the empty service name) starts SERVING. Added in one line:
 * {@code RpcServer.forPort(port).addService(health)}. Works for rdmarpc and standard gRPC clients alike, e.g.
 * Kubernetes' gRPC probes.
 */
public final class HealthService extends HealthRpc.HealthImplBase {
    /** The name that stands for the whole server. */
    public static final String SERVER = "";

    private final Map<String, ServingStatus> statuses = new ConcurrentHashMap<>();
    private final Map<String, Set<Watcher>> watchers = new ConcurrentHashMap<>();

    /** A health service that reports the server as SERVING and knows no other service yet. */
    public HealthService() {
        statuses.put(SERVER, ServingStatus.SERVING);
    }

    /** Sets {@code service}'s status (SERVING or NOT_SERVING, typically); watchers hear of a change. */
    public void setStatus(String service, ServingStatus status) {
        Objects.requireNonNull(service, "service");
        if (status == null || status == ServingStatus.UNRECOGNIZED) {
            throw new IllegalArgumentException("not a serving status: " + status);
        }
        statuses.put(service, status);
        notifyWatchers(service, status);
    }

    /** Forgets {@code service}: Check answers NOT_FOUND for it, watchers hear SERVICE_UNKNOWN. */
    public void clearStatus(String service) {
        statuses.remove(service);
        notifyWatchers(service, ServingStatus.SERVICE_UNKNOWN);
    }

    /** Every known service, the server included, becomes NOT_SERVING: for a server about to shut down. */
    public void enterShutdown() {
        for (String service : statuses.keySet()) {
            setStatus(service, ServingStatus.NOT_SERVING);
        }
    }

    /** The status Check would answer for {@code service}, or null when it is not known. */
    public ServingStatus status(String service) {
        return statuses.get(service);
    }

    @Override
    public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> responses) {
        ServingStatus s = statuses.get(request.getService());
        if (s == null) {
            responses.onError(Status.NOT_FOUND.withDescription("unknown service " + request.getService()).asException());
            return;
        }
        responses.onNext(response(s));
        responses.onCompleted();
    }

    @Override
    public void watch(HealthCheckRequest request, StreamObserver<HealthCheckResponse> responses) {
        String service = request.getService();
        Watcher w = new Watcher((ServerCallStreamObserver<HealthCheckResponse>) responses);
        Set<Watcher> set = watchers.computeIfAbsent(service, k -> ConcurrentHashMap.newKeySet());
        set.add(w);
        w.observer.setOnCancelHandler(() -> set.remove(w));
        w.observer.setOnReadyHandler(w::drain);
        w.offer(statuses.getOrDefault(service, ServingStatus.SERVICE_UNKNOWN));
    }

    private void notifyWatchers(String service, ServingStatus status) {
        Set<Watcher> set = watchers.get(service);
        if (set != null) {
            for (Watcher w : set) {
                w.offer(status);
            }
        }
    }

    private static HealthCheckResponse response(ServingStatus s) {
        return HealthCheckResponse.newBuilder().setStatus(s).build();
    }

    /**
     * One Watch call: sends the latest status when it differs from the last one sent and the call can take it, so a
     * client that does not read holds one pending status, never a queue (and never blocks the thread setting it).
     */
    private static final class Watcher {
        final ServerCallStreamObserver<HealthCheckResponse> observer;
        private ServingStatus sent;
        private ServingStatus latest;

        Watcher(ServerCallStreamObserver<HealthCheckResponse> observer) {
            this.observer = observer;
        }

        synchronized void offer(ServingStatus status) {
            latest = status;
            drain();
        }

        synchronized void drain() {
            if (latest != null && latest != sent && !observer.isCancelled() && observer.isReady()) {
                sent = latest;
                observer.onNext(response(latest));
            }
        }
    }
}
