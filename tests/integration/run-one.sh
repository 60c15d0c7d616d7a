#!/bin/sh
# run-one.sh TEST - how `make check` runs each script test of this
# directory (SH_LOG_COMPILER).  With GB_INTEGRATION_SMOKE set (test file
# names, blank-separated) only those run and the others exit 77: .ci/run's
# distcheck runs a set, the tests phase having run them all on the same
# release minutes before.
t=$1
if [ -n "${GB_INTEGRATION_SMOKE:-}" ]; then
	case " $GB_INTEGRATION_SMOKE " in
	*" ${t##*/} "*) ;;
	*)
		echo "SKIP: ${t##*/}: this CI phase runs a set of the integration tests only (GB_INTEGRATION_SMOKE: $GB_INTEGRATION_SMOKE)"
		exit 77
		;;
	esac
fi
exec "$@"
