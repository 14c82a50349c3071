/**
 * Call and connection metrics of a channel or a server: the {@link dev.rdmarpc.core.internal.metrics.CallMetrics}
 * events the calls and connections report, and their Micrometer meters
 * ({@link dev.rdmarpc.core.internal.metrics.MicrometerCallMetrics}, loaded only when a meter registry is configured).
 * Depends on the slab pool and on {@code Transports} (for the upgraders' own meters), never on channels, servers or
 * calls.
 */
package dev.rdmarpc.core.internal.metrics;
