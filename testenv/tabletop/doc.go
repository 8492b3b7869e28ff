// Package tabletop is a pure-Go, LIBERO-style tabletop manipulation
// benchmark: four suites of ten language-conditioned tasks (spatial,
// object, goal, long) in a 2.5-D rigid-body scene with a kinematic
// parallel gripper, two rendered RGB cameras, sparse success rewards, the
// 50-fixed-initial-states evaluation protocol, and a scripted expert that
// solves every task.
//
// LIBERO (Liu et al., 2023, "LIBERO: Benchmarking Knowledge Transfer for
// Lifelong Robot Learning") runs on Python and MuJoCo; this package keeps
// its task structure, predicates, action and observation conventions and
// time limits, and replaces the physics by a small deterministic model.
//
// # Suites
//
//   - spatial: two identical black bowls, a plate, a cookie box, a ramekin,
//     a wooden cabinet and a stove in ten layouts; the instruction names
//     the bowl to put on the plate by its spatial relation ("between the
//     plate and the ramekin", "on the cookie box", "in the top drawer of
//     the wooden cabinet", ...). Goal On(bowl, plate). 220 steps.
//   - object: a basket and six of ten grocery items (alphabet soup, cream
//     cheese, salad dressing, bbq sauce, ketchup, tomato sauce, butter,
//     milk, chocolate pudding, orange juice); each task asks for a
//     different item in the basket. Goal In(item, basket). 280 steps.
//   - goal: one scene (bowl, plate, cream cheese, wine bottle, a cabinet
//     with three drawers, a stove with a knob, a wine rack) and ten goals:
//     open a drawer, turn on the stove, push the plate to the front of the
//     stove, put things on the plate, in the bowl, on the cabinet, on the
//     rack, on the stove, in a drawer. 300 steps.
//   - long: two-part goals in varied scenes (two items in the basket, turn
//     on the stove and put the moka pot on it, a bowl in a drawer and close
//     it, two mugs on two plates, a book in the caddy's back compartment,
//     ...). LIBERO-10's microwave task is replaced by a drawer task of the
//     same shape. 520 steps.
//
// # Simulation
//
// Coordinates are metres: x to the right, y away from the agentview
// camera (the back of the table), z up from the table top. Every entity is
// an axis-aligned box or vertical cylinder standing on its bottom face.
// Containers (bowl, ramekin, basket, caddy) collide through their walls
// and floor, so things fit inside them. Fixtures (cabinet, stove, rack)
// never move; the cabinet's three drawers are prismatic joints (0 to
// 14 cm) and the stove knob a revolute joint (0 to 1.2 rad).
//
// The gripper is kinematic: the action moves the fingertip centre by up to
// 1.5 cm per step per axis (20 Hz control, so 0.3 m/s), sweeping its
// collision boxes (two fingers and the palm, plus a held object) along one
// axis at a time against everything else. A free object in the way of a
// sideways move is pushed along (and what rests on it rides along) unless
// it is itself blocked; a drawer front is pushed in; a fingertip hooked
// behind a drawer's handle pulls the drawer out; a fingertip sweeping
// sideways through the stove knob turns it (+x on, 2 cm = 0.3 rad), and a
// closed gripper on the knob turns it with its wrist. Closing the fingers
// grasps the widest object that sits between them (width within the
// opening the close started from, so that anything within the slack is
// caught, the first finger to touch it pushing it to the centre; both
// fingers reaching its sides, the fingertips level with its
// body, the gripper tilted less than 0.35 rad); the held object then
// moves rigidly with the fingertip (it does not turn with the wrist).
// Opening the fingers releases it; released and unsupported objects fall
// under gravity and rest on the highest surface below them: the table,
// the top of whatever is under their footprint, a container's floor when
// their centre is inside the container, a drawer's floor when their centre
// is inside the drawer. Things never tip over. Given the same initial
// state and actions, every step is bit-for-bit deterministic.
//
// # Predicates
//
// On(a, b): a rests (not held, not falling) with its bottom within 5 mm
// of b's top, and its centre within 3 cm of b's centre if b is small
// (footprint at most 8 cm across) or inside b's footprint if b is large
// (plate, cookie box, cabinet top, stove, rack). In(a, region): a rests
// with its centre inside the region's axis-aligned box (a container's
// interior, a drawer's interior moving with it, or a box anchored to an
// entity, such as the front of the stove). Open: a drawer pulled out at
// least 10 cm; Close: at most 1 cm. TurnOn: the knob at least 0.5 rad;
// TurnOff: at most 0.1 rad. A goal is a conjunction; the reward is 1 on
// the step it first holds, which terminates the episode.
//
// # Observations
//
// Step returns a 46-value state vector (see [ObsDim]): proprioception
// (fingertip position, orientation as axis-angle with the axis toward +x so
// that it is continuous around pointing down, finger positions), the
// centres of up to eight entities in task order (object and destination
// first), the four joint values, and a one-hot task index. Values are
// rounded to float32 precision. [Env.Images] renders the agentview and
// wrist cameras (RGB, height × width × 3, 64×64 by default), and
// [Env.InstructionTokens] gives the instruction in the fixed
// [Vocabulary].
//
// # Evaluation
//
// [Env.ResetTo] starts a task from one of its 50 fixed initial states,
// generated from a PCG seed per (suite, task, index) with the layout's
// jitter (±1 cm for objects, ±0.5 cm for fixtures). Reset draws a jittered
// state from the caller's generator and samples the task with weight
// failures-in-its-last-100-episodes + 1, as AcceRL's rollout workers do.
// [Expert] is a scripted closed-loop policy; [BenchExpert] measures it and
// [RenderEpisode] writes an episode's frames and a contact sheet.
package tabletop
