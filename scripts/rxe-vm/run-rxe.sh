#!/bin/bash
# run-rxe.sh - run one shell command inside a throwaway QEMU guest that has a real kernel verbs stack:
# Debian bookworm's own 6.1 kernel with Soft-RoCE (rdma_rxe) providing rxe0 on a dummy netdev
# (192.168.77.1/24, RoCE v2; GID index 1 is ::ffff:192.168.77.1), and a second device rxe1 on dummy1
# (192.168.78.1/24) for tests that pick a device per connection.
#
# The guest's root file system is this machine's root, shared read-only over virtio-9p with a tmpfs overlay
# (so every installed package, JDK and ~/.m2 jar is there); SHARE_DIR is mounted read-write at the same path
# and is the command's working directory, so build outputs and test reports come back. Everything else the
# guest writes is discarded. The guest command's exit code is returned (124 when TIMEOUT killed QEMU).
#
# usage: scripts/rxe-vm/run-rxe.sh [-s SHARE_DIR] [-m MEM_MB] [-c CPUS] [--no-rxe] [--] 'shell command'
# env:   ACCEL    QEMU accelerator (default tcg,thread=single; see NOTES)
#        CPU      QEMU CPU model (default max)
#        RXE_VM_CACHE  kernel, initramfs cache (default ${XDG_CACHE_HOME:-~/.cache}/rxe-vm)
#        TIMEOUT  seconds before QEMU is killed (default 3600)
#        RXE_VM_CPUS  the guest's vCPUs when -c is not given (default: this machine's cores)
#
# NOTES  Needs root for the first run (apt-get installs qemu-system-x86 busybox-static kmod cpio rdma-core
#        ibverbs-providers ibverbs-utils rdmacm-utils perftest iproute2 and downloads the kernel package).
#        KVM is not used: on nested hosts it often cannot boot a stock kernel. Keep single-threaded TCG: with
#        ACCEL=tcg,thread=multi and 2 vCPUs HotSpot crashed (SIGSEGV in C1 code) in about 1 of 4 JVM runs.
#        TCG is slow: Java runs 15-35x slower than natively, and busy-polling verbs peers on different vCPUs
#        see ~8 ms round trips, so tests run here should wait for completions in event mode (completion channel).
set -euo pipefail

BASE=${RXE_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rxe-vm}
SHARE=$PWD
MEM=4096
CPUS=${RXE_VM_CPUS:-$(nproc)}
RXE=1
ACCEL=${ACCEL:-tcg,thread=single}
CPU=${CPU:-max}
while [ $# -gt 0 ]; do
  case "$1" in
    -s) SHARE=$(readlink -f "$2"); shift 2;;
    -m) MEM=$2; shift 2;;
    -c) CPUS=$2; shift 2;;
    --no-rxe) RXE=0; shift;;
    -h|--help) sed -n '2,24p' "$0"; exit 0;;
    --) shift; break;;
    *) break;;
  esac
done
CMD=${*:-"ibv_devices; ibv_devinfo"}
mkdir -p "$BASE"
cd "$BASE"

log() { echo "rxe-vm: $*" >&2; }

# ---------- one-time host setup (idempotent) ----------
PKGS="qemu-system-x86 busybox-static kmod cpio rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest iproute2"
# shellcheck disable=SC2086
if ! dpkg -s $PKGS >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || { log "missing packages and not root: apt-get install $PKGS"; exit 1; }
  log "installing $PKGS"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
fi
if [ ! -d kernel/boot ]; then
  # Debian's own kernel package: it has rdma_rxe (CONFIG_RDMA_SIW is not set in bookworm).
  dep=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}' || true)
  if [ -z "$dep" ]; then
    apt-get update -qq
    dep=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
  fi
  log "downloading kernel package $dep"
  apt-get download "$dep" 2>/dev/null
  rm -rf kernel.tmp && mkdir -p kernel.tmp && dpkg -x "$dep"_*.deb kernel.tmp && mv kernel.tmp kernel
  rm -f "$dep"_*.deb
fi
KVER=${KVER:-$(ls kernel/lib/modules | head -1)}
VMLINUZ=$BASE/kernel/boot/vmlinuz-$KVER
MODDIR=$BASE/kernel/lib/modules/$KVER
[ -f "$MODDIR/modules.dep.bin" ] || depmod -b "$BASE/kernel" "$KVER"

# ---------- initramfs: busybox + virtio/9p/overlay modules; mounts the host root and switch_roots ----------
INITRD=$BASE/initramfs-$KVER.cpio.gz
if [ ! -f "$INITRD" ]; then
  R=$BASE/initramfs.d
  rm -rf "$R"
  mkdir -p "$R"/{bin,mods,proc,sys,dev,lower,rw,newroot}
  cp "$(command -v busybox)" "$R/bin/busybox"
  for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
           netfs fscache 9pnet 9pnet_virtio 9p overlay; do
    f=$(modinfo -b "$BASE/kernel" -k "$KVER" -n $m)
    cp "$f" "$R/mods/$m.ko"
  done
  cat > "$R/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p overlay; do
  insmod /mods/$m.ko || echo "initramfs: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower || { echo "9p root mount failed"; exec sh; }
mount -t tmpfs -o size=75% tmpfs /rw; mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || { echo "overlay mount failed"; exec sh; }
CTL=$(sed -n 's/.*rxevm.ctl=\([^ ]*\).*/\1/p' /proc/cmdline)
mkdir -p /newroot$CTL
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 ctl /newroot$CTL || { echo "ctl mount failed"; exec sh; }
umount /proc /sys; umount /dev 2>/dev/null
exec switch_root /newroot /bin/bash $CTL/stage2.sh
INIT
  chmod +x "$R/init"
  (cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD"
  rm -rf "$R"
fi

# ---------- stage 2: runs as PID 1 inside the overlay root ----------
CTL=$(mktemp -d "$BASE/ctl.XXXXXX")
trap 'rm -rf "$CTL"' EXIT
cat > "$CTL/stage2.sh" <<STAGE2
#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=$HOME TERM=dumb LANG=C.UTF-8
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
ulimit -l unlimited                     # memory registration needs locked memory
mkdir -p /lib/modules/$KVER && mount --bind $MODDIR /lib/modules/$KVER
mkdir -p $SHARE && mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none share $SHARE
hostname rxe-guest; ip link set lo up
if [ $RXE = 1 ]; then
  modprobe -a crc32_generic rdma_rxe ib_uverbs rdma_ucm dummy
  ip link add dummy0 type dummy; ip addr add 192.168.77.1/24 dev dummy0; ip link set dummy0 up
  rdma link add rxe0 type rxe netdev dummy0
  ip link add dummy1 type dummy; ip addr add 192.168.78.1/24 dev dummy1; ip link set dummy1 up
  rdma link add rxe1 type rxe netdev dummy1
fi
echo "=== guest ready, uptime \$(cut -d' ' -f1 /proc/uptime)s ==="
cd $SHARE
bash -c $(printf '%q' "$CMD"); rc=\$?
echo "=== guest command exit code: \$rc (uptime \$(cut -d' ' -f1 /proc/uptime)s) ==="
echo \$rc > $CTL/rc; sync
echo b > /proc/sysrq-trigger            # instant reboot -> QEMU exits because of -no-reboot
STAGE2

qrc=0
timeout "${TIMEOUT:-3600}" qemu-system-x86_64 -accel "$ACCEL" -cpu "$CPU" -smp "$CPUS" -m "$MEM" \
  -nographic -no-reboot -nodefaults -serial stdio -monitor none \
  -kernel "$VMLINUZ" -initrd "$INITRD" \
  -append "console=ttyS0 quiet panic=-1 rxevm.ctl=$CTL" \
  -fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
  -fsdev local,id=c,path="$CTL",security_model=none \
  -device virtio-9p-pci,fsdev=c,mount_tag=ctl \
  -fsdev local,id=s,path="$SHARE",security_model=none,multidevs=remap \
  -device virtio-9p-pci,fsdev=s,mount_tag=share || qrc=$?
rc=$(cat "$CTL/rc" 2>/dev/null || echo 255)
[ "$qrc" = 124 ] && rc=124
exit "$rc"
