package dev.rdmarpc.reflection;

import com.google.protobuf.Descriptors.FileDescriptor;
import dev.rdmarpc.core.ServerCallStreamObserver;
import dev.rdmarpc.core.Status;
import dev.rdmarpc.core.StreamObserver;
import dev.rdmarpc.reflection.v1.ErrorResponse;
import dev.rdmarpc.reflection.v1.ExtensionNumberResponse;
import dev.rdmarpc.reflection.v1.ExtensionRequest;
import dev.rdmarpc.reflection.v1.FileDescriptorResponse;
import dev.rdmarpc.reflection.v1.ListServiceResponse;
import dev.rdmarpc.reflection.v1.ServerReflectionRequest;
import dev.rdmarpc.reflection.v1.ServerReflectionResponse;
import dev.rdmarpc.reflection.v1.ServiceResponse;

import java.util.List;
import java.util.function.Consumer;

/**
 * One {@code ServerReflectionInfo} call: answers each request in turn from the server's {@link ReflectionIndex}. It
 * reads the next request only once the previous answer could be sent without buffering past the flow-control window,
 * so a client that asks without reading holds at most one answer in the server.
 */
final class ReflectionStream implements StreamObserver<ServerReflectionRequest> {
    private final ReflectionIndex index;
    private final ServerCallStreamObserver<?> call;
    private final Consumer<ServerReflectionResponse> send;
    /** An answer went out while the call was not ready: the next request is asked for once it is. */
    private boolean awaitingReady;

    /**
     * A stream answering from {@code index}: {@code call} is the call's response observer (for its flow control and
     * its end), {@code send} sends one answer on it (converted to the call's message type where that differs).
     */
    ReflectionStream(ReflectionIndex index, ServerCallStreamObserver<?> call, Consumer<ServerReflectionResponse> send) {
        this.index = index;
        this.call = call;
        this.send = send;
        call.disableAutoRequest();
        call.setOnReadyHandler(this::onReady);
        call.request(1);
    }

    @Override
    public void onNext(ServerReflectionRequest request) {
        send.accept(answer(request));
        if (call.isReady()) {
            call.request(1);
        } else {
            awaitingReady = true;
        }
    }

    private void onReady() {
        if (awaitingReady) {
            awaitingReady = false;
            call.request(1);
        }
    }

    @Override
    public void onError(Throwable t) {
        // the call is over (cancelled by the client or its deadline): nothing more is sent
    }

    @Override
    public void onCompleted() {
        call.onCompleted();
    }

    /** The answer to one request: what it asks for, or an error response (the stream goes on either way). */
    ServerReflectionResponse answer(ServerReflectionRequest request) {
        ServerReflectionResponse.Builder response = ServerReflectionResponse.newBuilder()
                .setValidHost(request.getHost())
                .setOriginalRequest(request);
        return switch (request.getMessageRequestCase()) {
            case LIST_SERVICES -> response.setListServicesResponse(services()).build();
            case FILE_BY_FILENAME -> file(response, index.fileByName(request.getFileByFilename()), "file not found: "
                    + request.getFileByFilename());
            case FILE_CONTAINING_SYMBOL -> file(response, index.fileContainingSymbol(request.getFileContainingSymbol()),
                    "symbol not found: " + request.getFileContainingSymbol());
            case FILE_CONTAINING_EXTENSION -> {
                ExtensionRequest e = request.getFileContainingExtension();
                yield file(response, index.fileContainingExtension(e.getContainingType(), e.getExtensionNumber()),
                        "extension not found: number " + e.getExtensionNumber() + " of " + e.getContainingType());
            }
            case ALL_EXTENSION_NUMBERS_OF_TYPE -> extensionNumbers(response, request.getAllExtensionNumbersOfType());
            case MESSAGEREQUEST_NOT_SET -> error(response, Status.Code.UNIMPLEMENTED,
                    "the request asks for nothing this server knows of");
        };
    }

    private ListServiceResponse services() {
        ListServiceResponse.Builder list = ListServiceResponse.newBuilder();
        for (String name : index.serviceNames()) {
            list.addService(ServiceResponse.newBuilder().setName(name));
        }
        return list.build();
    }

    private static ServerReflectionResponse file(ServerReflectionResponse.Builder response, FileDescriptor file,
                                                 String notFound) {
        if (file == null) {
            return error(response, Status.Code.NOT_FOUND, notFound);
        }
        FileDescriptorResponse.Builder files = FileDescriptorResponse.newBuilder();
        for (FileDescriptor f : ReflectionIndex.withDependencies(file)) {
            files.addFileDescriptorProto(f.toProto().toByteString());
        }
        return response.setFileDescriptorResponse(files).build();
    }

    private ServerReflectionResponse extensionNumbers(ServerReflectionResponse.Builder response, String type) {
        List<Integer> numbers = index.extensionNumbers(type);
        if (numbers == null) {
            return error(response, Status.Code.NOT_FOUND, "message type not found: " + type);
        }
        return response.setAllExtensionNumbersResponse(ExtensionNumberResponse.newBuilder()
                .setBaseTypeName(type).addAllExtensionNumber(numbers)).build();
    }

    private static ServerReflectionResponse error(ServerReflectionResponse.Builder response, Status.Code code,
                                                  String message) {
        return response.setErrorResponse(ErrorResponse.newBuilder().setErrorCode(code.value())
                .setErrorMessage(message)).build();
    }
}
