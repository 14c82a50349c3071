# syntax=docker/dockerfile:1
# One image for docker-compose.yml: the key-value sample (samples/target/rdmarpc-samples.jar) and the
# benchmark CLI (benchmarks/target/rdmarpc-bench.jar) on a JRE 25, with libibverbs for the rdma profile.

FROM eclipse-temurin:25-jdk AS build
WORKDIR /src
COPY . .
# The whole reactor (installed, so the benchmark's protoc plugin resolves dev.rdmarpc:codegen), then the
# benchmarks module on its own while it is not listed in the root pom.
RUN --mount=type=cache,target=/root/.m2 \
    ./mvnw -B -q install -DskipTests \
 && if ! grep -q '<module>benchmarks</module>' pom.xml; then ./mvnw -B -q -f benchmarks/pom.xml package -DskipTests; fi \
 && mkdir -p /out \
 && cp samples/target/rdmarpc-samples.jar benchmarks/target/rdmarpc-bench.jar /out/

FROM eclipse-temurin:25-jre
# libibverbs and its providers (mlx5, rxe, …): rdmarpc calls them through java.lang.foreign when the
# rdma profile passes /dev/infiniband in; over TCP they are simply not used.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libibverbs1 ibverbs-providers \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /out/ /app/
# The flags every rdmarpc JVM runs with (docker-compose.yml passes them explicitly too).
ENV RDMARPC_JVM_FLAGS="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
CMD ["java", "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-jar", "/app/rdmarpc-bench.jar", "--help"]
