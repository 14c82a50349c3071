/**
 * Where rdmarpc runs callbacks and timers: the shared default callback executor
 * ({@link dev.rdmarpc.core.internal.exec.CallbackExecutor}) with its per-thread
 * {@link dev.rdmarpc.core.internal.exec.CallbackLane}s and the {@link dev.rdmarpc.core.internal.exec.StallWatchdog}
 * that keeps a blocked callback from holding up its lane, and the shared deadline timer
 * ({@link dev.rdmarpc.core.internal.exec.RpcExecutors}). Depends on nothing else of rdmarpc: calls, connections,
 * channels and servers use it.
 */
package dev.rdmarpc.core.internal.exec;
