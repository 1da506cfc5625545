#!/usr/bin/env bash
# gpuvet snapshot, system sections, against independent oracles:
#  - packages: a root whose dpkg database is written by the real dpkg (real
#    .deb files built with dpkg-deb, a held package, a removed one with
#    conffiles), compared with dpkg-query --admindir; and this machine's own
#    status file, compared the same way;
#  - loader: real shared objects built with gcc, compared with what the real
#    ldconfig puts first in a cache built for the same root;
#  - gpus/drivers/host from a sysfs/procfs tree written here (sysfs is plain
#    files, so the tree is the real format): an MI210 and an H200;
#  - secrets: values of secret-looking variables never appear anywhere;
#  - bad input: FIFO, huge file, symlink loops, include loops;
#  - the live snapshot of this machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for tool in dpkg dpkg-deb dpkg-query gcc python3 ldconfig; do
    need_cmd "$tool" "$tool not installed"
done
gv_tmpdir T snapshot_system
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
at_exit cleanup
snap() { # snap OUT ARGS...: snapshot, under a hang guard
    local out=$1; shift
    timeout 60 "$GPUVET" snapshot --no-hash "$@" -o "$out" 2>"$out.err" ||
        fail "snapshot $* failed ($?): $(cat "$out.err")"
}

R="$T/ro[o]t *"   # glob metacharacters and a blank in the root path
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
touch "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available"

# ---- real Debian packages installed into the root by the real dpkg ---------
mkdeb() { # mkdeb NAME VERSION [SOURCE] [CONFFILE]
    local d="$T/deb/$1"
    mkdir -p "$d/DEBIAN" "$d/usr/share/doc/$1"
    {
        echo "Package: $1"
        echo "Version: $2"
        echo "Architecture: amd64"
        [[ -n "${3:-}" ]] && echo "Source: $3"
        echo "Maintainer: gpuvet test <test@example.invalid>"
        echo "Description: gpuvet test package $1"
        echo " A multi-line description"
        echo " ."
        echo " with a Package: line inside that must not count."
    } >"$d/DEBIAN/control"
    echo "$1 $2" >"$d/usr/share/doc/$1/VERSION"
    if [[ -n "${4:-}" ]]; then
        mkdir -p "$d$(dirname "$4")"
        echo "option=1" >"$d$4"
        echo "$4" >"$d/DEBIAN/conffiles"
    fi
    dpkg-deb --root-owner-group -b "$d" "$T/deb/$1.deb" >/dev/null
    dpkg --root="$R" --force-script-chrootless --force-not-root --force-bad-path \
        -i "$T/deb/$1.deb" >/dev/null
}
mkdeb rocm-core 6.0.0.60000-91~22.04
mkdeb libamdhip64-5 5.7.1-3 "rocm-hipamd (5.7.1-3)"
mkdeb hip-runtime-amd 6.0.32830.60000-91~22.04
mkdeb amdgpu-dkms 1:6.3.6.60000-1697589.22.04
mkdeb nvidia-dkms-550 550.54.15-0ubuntu1 "" /etc/nvidia-test.conf
mkdeb cuda-toolkit-12-4 12.4.1-1
mkdeb hello-gpuvet 2.10-3
mkdeb cudatext-not-gpu 1.0-1
dpkg --root="$R" --force-script-chrootless --force-not-root --force-bad-path \
    -r nvidia-dkms-550 >/dev/null
printf 'rocm-core hold\namdgpu-dkms hold\n' | dpkg --root="$R" --set-selections

snap "$T/a.json" --root "$R"
S="$T/a.json"
expect_json "$S" "d['packages']['collected']" True
expect_json "$S" "d['packages']['manager']" dpkg
# names and versions: exactly what dpkg-query lists
dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Package} ${Version}\n' | LC_ALL=C sort >"$T/oracle"
json_get "$S" "'\n'.join(i['name']+' '+i.get('version','') for i in d['packages']['items'])" |
    LC_ALL=C sort >"$T/ours"
diff -u "$T/oracle" "$T/ours" || fail "package list differs from dpkg-query"
[[ $(wc -l <"$T/oracle") -eq 8 ]] || fail "expected 8 packages in the oracle"
# hold flags: dpkg-query's want field
dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Package} ${db:Status-Want}\n' |
    awk '$2=="hold"{print $1}' | LC_ALL=C sort >"$T/oracle"
json_get "$S" "'\n'.join(i['name'] for i in d['packages']['items'] if i['hold'])" >"$T/ours"
diff -u "$T/oracle" "$T/ours" || fail "hold flags differ from dpkg-query"
expect_json "$S" "[i['state'] for i in d['packages']['items'] if i['name']=='nvidia-dkms-550']" "['config-files']"
expect_json "$S" "[i.get('source_package') for i in d['packages']['items'] if i['name']=='libamdhip64-5']" "['rocm-hipamd']"
# GPU marks: the test's own list
expect_json "$S" "sorted(i['name'] for i in d['packages']['items'] if i['gpu'])" \
    "['amdgpu-dkms', 'cuda-toolkit-12-4', 'hip-runtime-amd', 'libamdhip64-5', 'nvidia-dkms-550', 'rocm-core']"
expect_json "$S" "d['packages']['count']" 8
expect_json "$S" "d['packages']['gpu_count']" 6
# digests: sha256 of the sorted name=version:arch lines of installed packages
want=$(dpkg-query --admindir="$R/var/lib/dpkg" -W \
    -f '${db:Status-Status} ${Package}=${Version}:${Architecture}\n' |
    awk '$1=="installed"{print $2}' | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
expect_json "$S" "d['packages']['digest']" "$want"
want=$(dpkg-query --admindir="$R/var/lib/dpkg" -W \
    -f '${db:Status-Status} ${Package}=${Version}:${Architecture}\n' |
    awk '$1=="installed"{print $2}' | grep -E '^(rocm-core|libamdhip64-5|hip-runtime-amd|amdgpu-dkms|cuda-toolkit-12-4)=' |
    LC_ALL=C sort | sha256sum | cut -d' ' -f1)
expect_json "$S" "d['packages']['gpu_digest']" "$want"
# drivers: DKMS packages come from the packages section
expect_json "$S" "d['drivers']['dkms']['amdgpu-dkms']['version']" "1:6.3.6.60000-1697589.22.04"
expect_json "$S" "d['drivers']['dkms']['amdgpu-dkms']['hold']" True
expect_json "$S" "d['drivers']['not_collected']['modules'].startswith('no such directory under --root')" True
echo "ok: packages match dpkg-query (fixture root)"

# ---- this machine's real status file ------------------------------------------
if [[ -r /var/lib/dpkg/status ]]; then
    M="$T/machine"
    mkdir -p "$M/var/lib/dpkg"
    cp /var/lib/dpkg/status "$M/var/lib/dpkg/status"
    snap "$T/m.json" --root "$M"
    dpkg-query --admindir="$M/var/lib/dpkg" -W -f '${Package}:${Architecture} ${Version} ${db:Status-Want}\n' |
        LC_ALL=C sort >"$T/oracle"
    json_get "$T/m.json" "'\n'.join(i['name']+':'+i.get('arch','')+' '+i.get('version','')+' '+('hold' if i['hold'] else 'x') for i in d['packages']['items'])" |
        sed 's/ x$//' | LC_ALL=C sort >"$T/ours"
    sed -i 's/ \(install\|deinstall\|purge\|unknown\)$//' "$T/oracle"
    diff -u "$T/oracle" "$T/ours" >/dev/null || { diff -u "$T/oracle" "$T/ours" | head -20; fail "machine package list differs from dpkg-query"; }
    echo "ok: $(wc -l <"$T/oracle") packages of this machine match dpkg-query"
fi

# ---- sysfs/procfs tree: an MI210 and an H200 -----------------------------------
pci() { # pci ADDR VENDOR DEVICE REV SVENDOR SDEVICE CLASS DRIVER
    local d="$R/sys/bus/pci/devices/$1"
    mkdir -p "$d" "$R/sys/bus/pci/drivers/$8"
    echo "$2" >"$d/vendor"; echo "$3" >"$d/device"; echo "$4" >"$d/revision"
    echo "$5" >"$d/subsystem_vendor"; echo "$6" >"$d/subsystem_device"; echo "$7" >"$d/class"
    ln -s "../../../bus/pci/drivers/$8" "$d/driver"
}
pci 0000:03:00.0 0x1002 0x740f 0x02 0x1002 0x0c34 0x038000 amdgpu
pci 0000:41:00.0 0x10de 0x2335 0xa1 0x10de 0x18be 0x030200 nvidia
pci 0000:00:01.0 0x1022 0x1480 0x00 0x1022 0x1480 0x060000 pcieport   # not a GPU
pci 0000:05:00.0 0x1002 0x14ab 0x00 0x1002 0x14ab 0x060400 pcieport   # AMD bridge
K="$R/sys/class/kfd/kfd/topology/nodes"
mkdir -p "$K/0" "$K/1" "$R/sys/module/amdgpu" "$R/sys/module/nvidia"
printf 'cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\nlocation_id 0\ndomain 0\n' >"$K/0/properties"
printf 'cpu_cores_count 0\nsimd_count 416\ngfx_target_version 90010\nvendor_id 4098\ndevice_id 29711\nlocation_id 768\ndomain 0\ndrm_render_minor 128\n' >"$K/1/properties"
echo "6.3.6" >"$R/sys/module/amdgpu/version"
echo "550.54.15" >"$R/sys/module/nvidia/version"
mkdir -p "$R/proc/sys/kernel" "$R/proc/driver/nvidia"
echo "6.5.0-35-generic" >"$R/proc/sys/kernel/osrelease"
printf 'processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n' >"$R/proc/cpuinfo"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024" >"$R/proc/driver/nvidia/version"
mkdir -p "$R/var/lib/dkms/amdgpu/6.3.6-1697589.22.04/6.5.0-35-generic/x86_64" "$R/var/lib/dkms/amdgpu/6.3.6-1697589.22.04/source"
ln -s 6.3.6-1697589.22.04/6.5.0-35-generic/x86_64 "$R/var/lib/dkms/amdgpu/kernel-6.5.0-35-generic-x86_64"  # as DKMS does
mkdir -p "$R/var/lib/dkms/amdgpu/original_module"
mkdir -p "$R/etc"
printf 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\nUBUNTU_CODENAME=jammy\n' >"$R/etc/os-release"
snap "$S" --root "$R"
expect_json "$S" "[g['pci_address'] for g in d['gpus']['devices']]" "['0000:03:00.0', '0000:41:00.0']"
expect_json "$S" "d['gpus']['devices'][0]['vendor']+' '+d['gpus']['devices'][0]['device_id']+' '+d['gpus']['devices'][0]['revision']+' '+d['gpus']['devices'][0]['subsystem_device_id']+' '+d['gpus']['devices'][0]['class']+' '+d['gpus']['devices'][0]['driver']" \
    "amd 0x740f 0x02 0x0c34 0x038000 amdgpu"
expect_json "$S" "d['gpus']['devices'][0]['kfd']['gfx_target']+' '+str(d['gpus']['devices'][0]['kfd']['node'])+' '+d['gpus']['devices'][0]['kfd']['render_node']" "gfx90a 1 /dev/dri/renderD128"
expect_json "$S" "d['gpus']['devices'][1]['vendor']+' '+d['gpus']['devices'][1]['device_id']+' '+d['gpus']['devices'][1]['driver']+' '+str('kfd' in d['gpus']['devices'][1])" "nvidia 0x2335 nvidia False"
expect_json "$S" "d['drivers']['modules']['amdgpu']['version']+' '+d['drivers']['modules']['nvidia']['version']" "6.3.6 550.54.15"
expect_json "$S" "'550.54.15' in d['drivers']['modules']['nvidia']['proc_version']" True
expect_json "$S" "d['drivers']['dkms_tree']['amdgpu']" "[{'version': '6.3.6-1697589.22.04', 'kernels': ['6.5.0-35-generic'], 'source': '/var/lib/dkms/amdgpu/6.3.6-1697589.22.04'}]"
expect_json "$S" "d['host']['os']['id']+' '+d['host']['os']['version_id']+' '+d['host']['os']['codename']" "ubuntu 22.04 jammy"
expect_json "$S" "d['host']['kernel']['release']" "6.5.0-35-generic"
expect_json "$S" "d['host']['cpu']['logical_cpus']" 2
expect_json "$S" "d['host']['container']['collected']" False
echo "ok: gpus, drivers, host from the sysfs/procfs tree"

# ---- loader: real shared objects, checked against the real ldconfig ----------
echo 'int gv_test_symbol(void) { return 1; }' >"$T/lib.c"
mklib() { # mklib DIR FILE SONAME
    mkdir -p "$R$1"
    gcc -shared -fPIC -Wl,-soname,"$3" -o "$R$1/$2" "$T/lib.c"
    [[ "$2" == "$3" ]] || ln -sf "$2" "$R$1/$3"
}
mklib /opt/rocm-6.0.0/lib libamdhip64.so.6.0.32830 libamdhip64.so.6
mklib /opt/rocm-6.0.0/lib librocblas.so.4.0.60000 librocblas.so.4
mklib /usr/lib/x86_64-linux-gnu libamdhip64.so.5.7.31921 libamdhip64.so.5
mklib /usr/lib/x86_64-linux-gnu libamdhip64.so.6.1.0 libamdhip64.so.6   # shadowed by /opt/rocm
mklib /usr/lib/x86_64-linux-gnu libcuda.so.550.54.15 libcuda.so.1
mklib /usr/local/cuda-12.4/lib64/stubs libcuda.so libcuda.so
ln -sf libcuda.so "$R/usr/local/cuda-12.4/lib64/stubs/libcuda.so.1"
mkdir -p "$R/opt/broken"
echo "not an ELF file" >"$R/opt/broken/libamdhip64.so.5"                    # skipped by ld.so
ln -sfn /opt/rocm-6.0.0 "$R/opt/rocm"           # absolute link: resolved inside the root
mkdir -p "$R/etc/ld.so.conf.d" "$R/etc/extra.d"
echo "include ld.so.conf.d/*.conf" >"$R/etc/ld.so.conf"
echo "include /etc/extra.d/*.conf   # absolute" >>"$R/etc/ld.so.conf"
echo "/opt/broken" >"$R/etc/ld.so.conf.d/00-broken.conf"
printf '# ROCm\n/opt/rocm/lib\n/opt/rocm/lib64/\n' >"$R/etc/ld.so.conf.d/10-rocm.conf"
echo "include /etc/ld.so.conf" >"$R/etc/extra.d/loop.conf"                 # include loop
echo "/usr/local/lib" >"$R/etc/extra.d/zz.conf"
run_loader() { # LD_LIBRARY_PATH as the root's /etc/environment sets it (under --root
    # the variables are the image's; this process's LD_LIBRARY_PATH must not count)
    printf 'export LD_LIBRARY_PATH="%s"\n' "$1" >"$R/etc/environment"
    env -i LD_LIBRARY_PATH=/usr/lib "$GPUVET" snapshot --no-hash --root "$R" -o "$S" 2>"$S.err" || fail "snapshot failed"
    rm -f "$R/etc/environment"
}
timeout 60 env -i "$GPUVET" snapshot --no-hash --root "$R" -o "$S" || fail "loader snapshot failed or hung"
expect_json "$S" "[c['path'] for c in d['loader']['conf_files']][:4]" \
    "['/etc/ld.so.conf', '/etc/ld.so.conf.d/00-broken.conf', '/etc/ld.so.conf.d/10-rocm.conf', '/etc/extra.d/loop.conf']"
expect_json "$S" "d['loader']['search_dirs']" \
    "['/opt/broken', '/opt/rocm/lib', '/opt/rocm/lib64', '/usr/local/lib', '/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib']"
expect_json "$S" "'errors' in d['loader']" True
expect_json "$S" "'ld_library_path' in d['loader']" False
expect_json "$S" "d['loader']['resolved']['libamdhip64.so.6']" \
    "{'found': True, 'path': '/opt/rocm-6.0.0/lib/libamdhip64.so.6.0.32830', 'link': '/opt/rocm/lib/libamdhip64.so.6', 'via': 'ld.so.conf', 'conf_file': '/etc/ld.so.conf.d/10-rocm.conf'}"
expect_json "$S" "d['loader']['resolved']['libamdhip64.so.5']['path']" /usr/lib/x86_64-linux-gnu/libamdhip64.so.5.7.31921
expect_json "$S" "d['loader']['resolved']['libamdhip64.so.7']" "{'found': False}"
expect_json "$S" "d['loader']['resolved']['libcuda.so.1']['via']+' '+str(d['loader']['resolved']['libcuda.so.1'].get('stub'))" "default None"
# oracle: the real ldconfig's cache for this root (first entry = what ld.so takes)
cp -a "$R/etc/ld.so.conf" "$T/ld.so.conf.keep"
rm -f "$R/etc/extra.d/loop.conf"   # ldconfig itself loops on it
ldconfig -r "$R" -X 2>/dev/null
ldconfig -C "$R/etc/ld.so.cache" -p | awk '/=>/ && !seen[$1]++ {print $1, $NF}' |
    grep -E '^lib(amdhip64|rocblas|cuda)\.' | LC_ALL=C sort >"$T/oracle"
rm -f "$R/etc/ld.so.cache"
[[ $(wc -l <"$T/oracle") -eq 4 ]] || { cat "$T/oracle"; fail "ldconfig oracle should list 4 sonames"; }
json_get "$S" "'\n'.join(k+' '+v.get('link', v.get('path','')) for k,v in d['loader']['resolved'].items() if v['found'])" |
    LC_ALL=C sort >"$T/ours"
diff -u "$T/oracle" "$T/ours" || fail "loader resolution differs from the real ldconfig cache"
# LD_LIBRARY_PATH first: the CUDA stub wins, and is flagged
run_loader "/usr/local/cuda-12.4/lib64/stubs::/nonexistent"
expect_json "$S" "d['loader']['ld_library_path']" "['/usr/local/cuda-12.4/lib64/stubs', '', '/nonexistent']"
expect_json "$S" "d['loader']['resolved']['libcuda.so.1']" \
    "{'found': True, 'path': '/usr/local/cuda-12.4/lib64/stubs/libcuda.so', 'link': '/usr/local/cuda-12.4/lib64/stubs/libcuda.so.1', 'via': 'LD_LIBRARY_PATH', 'stub': True}"
echo "ok: loader resolution agrees with ldconfig; LD_LIBRARY_PATH stub detected"

# ---- permissions and environment under --root -----------------------------------
printf 'root:x:0:\nvideo:x:44:alice\nrender:x:109:\n' >"$R/etc/group"
mkdir -p "$R/etc/profile.d"
printf 'export ROCM_PATH=/opt/rocm-6.0.0\nexport ROCM_API_KEY=secret\n' >"$R/etc/profile.d/rocm.sh"
snap "$S" --root "$R"
expect_json "$S" "d['permissions']['render_group']" "{'exists': True, 'gid': 109}"
expect_json "$S" "'user' in d['permissions'] or 'devices' in d['permissions']" False
expect_json "$S" "sorted(d['permissions']['not_collected'])" "['devices', 'user']"
expect_json "$S" "d['environment']['profile_d']" \
    "[{'path': '/etc/profile.d/rocm.sh', 'sets': {'ROCM_PATH': '/opt/rocm-6.0.0'}, 'withheld': ['ROCM_API_KEY'], 'content_withheld': 'line 2 assigns a secret'}]"
expect_json "$S" "'process' in d" False
echo "ok: permissions and profile.d under --root"

# ---- secrets never leave the process ------------------------------------------
rnd() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
s1=$(rnd); s2=$(rnd); s3=$(rnd); s4=$(rnd); s5=$(rnd)
printf 'export ROCM_API_KEY=%s\nexport HSA_PASSWORD="%s"\nHF_TOKEN=%s\n' "$s5" "$s5" "$s5" >"$R/etc/profile.d/leak.sh"
# the image's own variables (/etc/environment): an allowlisted secret is listed by name
printf 'HSA_AUTH_TOKEN=%s\nHF_TOKEN="%s"\n' "$s4" "$s1" >"$R/etc/environment"
for mode in stdout file; do
    if [[ $mode == stdout ]]; then
        HF_TOKEN=$s1 AWS_SECRET_ACCESS_KEY=$s2 DB_PASSWORD=$s3 HSA_AUTH_TOKEN=$s4 \
            "$GPUVET" snapshot --no-hash --root "$R" >"$T/sec.out" 2>"$T/sec.err" || fail "snapshot failed"
    else
        HF_TOKEN=$s1 AWS_SECRET_ACCESS_KEY=$s2 DB_PASSWORD=$s3 HSA_AUTH_TOKEN=$s4 \
            "$GPUVET" snapshot --no-hash --root "$R" -o "$T/sec.json" >"$T/sec.out" 2>"$T/sec.err" || fail "snapshot -o failed"
    fi
    files=("$T/sec.out" "$T/sec.err")
    [[ $mode == file ]] && files+=("$T/sec.json")
    if [[ $mode == file ]]; then out="$T/sec.json"; else out="$T/sec.out"; fi
    [[ -s "$out" ]] || fail "no snapshot in $out"
    for s in "$s1" "$s2" "$s3" "$s4" "$s5"; do
        if grep -qF "$s" "${files[@]}"; then
            fail "a secret value leaked into the $mode output"
        fi
    done
done
expect_json "$T/sec.json" "'HF_TOKEN' in json.dumps(d) or 'AWS_SECRET' in json.dumps(d) or 'DB_PASSWORD' in json.dumps(d)" False
expect_json "$T/sec.json" "d['environment']['withheld']" "['HSA_AUTH_TOKEN']"
expect_json "$T/sec.json" "[p.get('withheld') for p in d['environment']['profile_d'] if p['path'].endswith('leak.sh')]" "[['ROCM_API_KEY', 'HSA_PASSWORD']]"
rm -f "$R/etc/profile.d/leak.sh" "$R/etc/environment"
echo "ok: no secret value in stdout, stderr or the file"

# ---- bad input: FIFO, huge file, loops, unreadable directories ---------------------
B="$T/bad"
mkdir -p "$B/var/lib/dpkg" "$B/etc/profile.d" "$B/etc/ld.so.conf.d" "$B/sys/bus/pci/devices/0000:01:00.0"
mkfifo "$B/var/lib/dpkg/status"
head -c 200000 /dev/zero | tr '\0' 'A' >"$B/etc/os-release"
ln -s b.sh "$B/etc/profile.d/a.sh"; ln -s a.sh "$B/etc/profile.d/b.sh"
echo "include /etc/ld.so.conf" >"$B/etc/ld.so.conf"
ln -s loop2 "$B/etc/ld.so.conf.d/loop1"; ln -s loop1 "$B/etc/ld.so.conf.d/loop2"
mkdir -p "$B/etc/group"                                       # a directory, not a file
ln -s driver "$B/sys/bus/pci/devices/0000:01:00.0/driver"     # self loop
echo 0x1002 >"$B/sys/bus/pci/devices/0000:01:00.0/vendor"
echo 0x030000 >"$B/sys/bus/pci/devices/0000:01:00.0/class"
timeout 30 "$GPUVET" snapshot --no-hash --root "$B" -o "$T/bad.json" 2>"$T/bad.err" || fail "bad root: snapshot failed or hung ($?)"
expect_json "$T/bad.json" "d['packages']['collected']" False
expect_json "$T/bad.json" "'not a regular file' in d['packages']['reason']" True
expect_json "$T/bad.json" "d['host']['os']['collected']" False
expect_json "$T/bad.json" "'larger than' in d['host']['os']['reason']" True
expect_json "$T/bad.json" "len(d['gpus']['devices'])" 1
expect_json "$T/bad.json" "'render_group' in d['permissions']" False
expect_json "$T/bad.json" "'groups' in d['permissions']['not_collected']" True
echo "ok: FIFO, huge file, loops and directories handled"

# ---- unreadable files, and the live view of an unprivileged user -------------------
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$GPUVET"; then
    U="$T/unreadable"
    mkdir -p "$U/var/lib/dpkg" "$U/etc"
    echo "Package: x" >"$U/var/lib/dpkg/status"
    echo "ID=x" >"$U/etc/os-release"
    chmod 000 "$U/var/lib/dpkg/status" "$U/etc/os-release"
    chmod a+rx "$T" "$U" "$U/var" "$U/var/lib" "$U/var/lib/dpkg" "$U/etc"
    chmod a+rwx "$T"
    asnobody() { timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    asnobody "$GPUVET" snapshot --no-hash --root "$U" -o "$T/u.json" 2>"$T/u.err" || fail "unreadable root: snapshot failed: $(cat "$T/u.err")"
    expect_json "$T/u.json" "d['packages']['collected']" False
    expect_json "$T/u.json" "'Permission denied' in d['packages']['reason']" True
    expect_json "$T/u.json" "'Permission denied' in d['host']['os']['reason']" True
    asnobody "$GPUVET" snapshot --no-hash -o "$T/nobody.json" 2>"$T/u.err" || fail "live snapshot as nobody failed: $(cat "$T/u.err")"
    expect_json "$T/nobody.json" "d['permissions']['uid']" 65534
    expect_json "$T/nobody.json" "d['permissions']['groups']" "['$(getent group 65534 | cut -d: -f1)']"
    expect_json "$T/nobody.json" "d['permissions']['video_group'].get('member')" "$(getent group video >/dev/null && echo False || echo None)"
    echo "ok: unreadable files and an unprivileged user"
else
    echo "note: not root, no setpriv, or $GPUVET not executable by nobody: unreadable-file checks not run"
fi

# ---- the live snapshot of this machine -------------------------------------------
timeout 120 "$GPUVET" snapshot --no-hash -o "$T/live.json" 2>"$T/live.err" || fail "live snapshot failed: $(cat "$T/live.err")"
for sec in host packages loader environment permissions gpus drivers; do
    expect_json "$T/live.json" "d['$sec']['collected']" True
done
expect_json "$T/live.json" "d['host']['kernel']['release']" "$(uname -r)"
expect_json "$T/live.json" "d['host']['cpu']['logical_cpus']" "$(grep -c '^processor' /proc/cpuinfo)"
expect_json "$T/live.json" "d['permissions']['uid']" "$(id -u)"
read -ra my_groups <<<"$(id -Gn)"
expect_json "$T/live.json" "sorted(d['permissions']['groups'])" "$(python3 -c "import sys; print(sorted(sys.argv[1:]))" "${my_groups[@]}")"
echo "ok: live snapshot"
