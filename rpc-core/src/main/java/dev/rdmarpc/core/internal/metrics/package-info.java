/**
 * Call and connection metrics of a channel or a server: the {@link dev.rdmarpc.core.internal.metrics.CallMetrics}
 * events the calls and connections report, and their Micrometer meters
 * ({@link dev.rdmarpc.core.internal.metrics.MicrometerCallMetrics}, loaded only when a meter registry is configured).
 * Depends on no other internal package: channels, servers, connections and calls report to it.
 */
package dev.rdmarpc.core.internal.metrics;
