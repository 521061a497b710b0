package runlog

import (
	"fmt"
	"time"
)

// RunName names a run as CleanRL does: <env>__<algo>__<seed>__<unix
// seconds>, e.g. "cartpole__ppo__1__1700000000". `drover train` uses it as
// the default run directory under runs/.
func RunName(env, algo string, seed uint64, t time.Time) string {
	return fmt.Sprintf("%s__%s__%d__%d", env, algo, seed, t.Unix())
}
