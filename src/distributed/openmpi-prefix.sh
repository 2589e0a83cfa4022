#!/usr/bin/env bash
# Makes a relocatable Open MPI (Debian 12's 4.1.4) in DIR, to run the distributed sort on a
# machine where Open MPI is not installed and that has no network: run this where apt works
# (Debian 12, the machine that built gpusort), copy DIR along with the build tree, and there
#   . DIR/env.sh
#   mpirun.openmpi -np 2 build/src/distributed/gpusort_distributed_bench ...
# DIR/env.sh points PATH, LD_LIBRARY_PATH and OPAL_PREFIX (with OPAL_SYSCONFDIR, OPAL_LIBDIR) at
# DIR, and keeps Open MPI on shared memory within the node (no network interface needed).
# Nothing is installed: the .deb files are only unpacked (dpkg -x).
set -euo pipefail
dir=${1:?usage: openmpi-prefix.sh DIR}
mkdir -p "$dir/debs"
dir=$(cd "$dir" && pwd)
packages=(openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 libhwloc-plugins
          libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1
          libpsm2-2 libpsm-infinipath1 libmunge2 libnl-3-200 libnl-route-3-200 libnuma1
          libxnvctrl0)
(cd "$dir/debs" && apt-get download "${packages[@]}")
for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/prefix"; done
cat > "$dir/env.sh" <<ENV
# Source this file: Open MPI from $(basename "$dir")/prefix (see openmpi-prefix.sh).
here=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=\$here/prefix/usr
export OPAL_SYSCONFDIR=\$here/prefix/etc/openmpi
export OPAL_LIBDIR=\$here/prefix/usr/lib/x86_64-linux-gnu/openmpi/lib
export PATH=\$here/prefix/usr/bin:\$PATH
export LD_LIBRARY_PATH=\$here/prefix/usr/lib/x86_64-linux-gnu:\$OPAL_LIBDIR:\$here/prefix/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
# One node: shared memory between the ranks, no network; root allowed (containers).
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ENV
echo "openmpi-prefix.sh: Open MPI in $dir/prefix; source $dir/env.sh, then run mpirun.openmpi"
