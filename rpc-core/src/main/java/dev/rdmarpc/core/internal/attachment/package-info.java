/**
 * Attachments (PROTOCOL.md "Attachments"): the application's outgoing region with its reference count and release
 * callback ({@link dev.rdmarpc.core.internal.attachment.OutgoingAttachment}), a received attachment
 * ({@link dev.rdmarpc.core.internal.attachment.ReceivedAttachment}), and the framing and size checks the calls apply
 * to both ({@link dev.rdmarpc.core.internal.attachment.Attachments}). Depends on the calls' message framing, on
 * {@code exec} (release callbacks run on the shared callback executor) and on the connection's log, never on
 * channels or servers.
 */
package dev.rdmarpc.core.internal.attachment;
